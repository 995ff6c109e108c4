package main

import (
	"fmt"
	"log"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote/seaweed"
)

// programTB lets this program use remote/seaweed, whose API takes a
// testing.TB: the project's one way to build and run SeaweedFS. It
// implements the methods seaweed calls (Helper, Logf, Fatalf, Cleanup);
// the embedded nil TB makes any other call panic loudly instead of
// silently doing nothing.
type programTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

// fatal is the panic value of programTB.Fatalf, recovered by startSeaweed.
type fatal struct{ msg string }

func (*programTB) Helper()                         {}
func (*programTB) Logf(format string, args ...any) { log.Printf(format, args...) }
func (*programTB) Fatalf(format string, args ...any) {
	panic(fatal{fmt.Sprintf(format, args...)})
}

func (p *programTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// close runs the cleanups, last registered first, as testing does.
func (p *programTB) close() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// startSeaweed starts a SeaweedFS server of this program (building it on
// first use); tb.close stops it and removes its data.
func startSeaweed(tb *programTB) (srv *seaweed.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s", f.msg)
		}
	}()
	return seaweed.Start(tb), nil
}
