//go:build !linux

package server

// watchKept cannot watch here: a waiting writer polls the kept state
// (offerPoll).
func watchKept(string) (<-chan struct{}, func()) { return nil, func() {} }
