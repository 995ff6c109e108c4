package server

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/slivingdoc/slivingdoc/remote"
)

// soloMemory is what a long-lived engine (serve) remembers of its own
// publications, so that a writer working alone commits in two requests
// instead of three: the state its last commit published is taken as the
// `current` of the next one, which the conditional replace then proves
// (remote.PublishFrom). Guessing wrong costs a pack upload and a failed
// replace before the usual three requests, so the guess is made only
// while the writer is alone: its last commit found `current` exactly as
// its commit before that had left it. In a fleet that is rarely so, and
// every commit reads `current` first, as without this memory.
//
// The guess is never made where a wrong one could mislead more than the
// replace: with a pending publication record on disk, which is decided
// against the observed state (pending.go) and must be decided against a
// read one. With group commit a guessed attempt is never registered:
// only a race lost after a read goes on as group commit's retries do
// (remote.PublishFrom).
type soloMemory struct {
	mu     sync.Mutex
	last   remote.State // the state the engine's last own commit published
	streak bool         // that commit observed the state the one before it published
}

// published records an own publication accepted on observed.
func (m *soloMemory) published(observed, accepted remote.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.streak = m.last.ETag != "" && observed.ETag == m.last.ETag
	m.last = accepted
}

// knownState returns the state to publish from, or the zero State: read
// `current` first.
func (s *session) knownState() remote.State {
	e := s.e
	if !e.longLived || s.base == nil {
		return remote.State{}
	}
	e.solo.mu.Lock()
	last, streak := e.solo.last, e.solo.streak
	e.solo.mu.Unlock()
	if !streak || last.Manifest == nil {
		return remote.State{}
	}
	if s.pendingRecorded() {
		return remote.State{}
	}
	return last
}

// mayGuessNearby reports whether the commit may build on the state the
// writer before it in the machine's turnstile published
// (remote.PublishNearby, server/turns.go), under knownState's rules: not
// with a pending record on disk; with group commit, only where there are
// turns (without them group commit's own first attempt decides,
// remote.PublishGroup); and only once the store's ID was read from the
// store by this engine (storeid.go: the kept state may be another
// store's).
func (s *session) mayGuessNearby() bool {
	return (!s.e.groupCommit || s.e.turns) && s.base != nil && !s.pendingRecorded() && (!s.e.turns || s.e.confirmStore(s.ctx))
}

// pendingRecorded reports whether a pending publication record may be on
// disk (any doubt counts as yes).
func (s *session) pendingRecorded() bool {
	_, err := os.Stat(s.state.file("pending"))
	return !errors.Is(err, fs.ErrNotExist)
}
