//go:build unix

package main

import (
	"fmt"
	"log"
	"testing"
)

// driverTB lets the campaign use remote/seaweed, whose API takes a
// testing.TB (the project's one way to build and control SeaweedFS). It
// implements the methods seaweed calls; the embedded nil TB makes any
// other call panic loudly. Fatalf panics with tbFatal, which seaweedCall
// turns back into an error.
type driverTB struct {
	testing.TB
	cleanups []func()
}

type tbFatal struct{ msg string }

func (*driverTB) Helper()                         {}
func (*driverTB) Logf(format string, args ...any) { log.Printf("seaweed: "+format, args...) }
func (*driverTB) Fatalf(format string, args ...any) {
	panic(tbFatal{fmt.Sprintf(format, args...)})
}
func (t *driverTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

// close runs the cleanups, last registered first.
func (t *driverTB) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

// seaweedCall runs f, returning a seaweed Fatalf as an error.
func seaweedCall(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ft, ok := r.(tbFatal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s", ft.msg)
		}
	}()
	f()
	return nil
}
