package bench

import (
	"fmt"
	"log"
	"sync"
	"testing"
)

// ProgramTB lets a program (bench/loadgen, bench/chaos) use internal/seaweed,
// whose API takes a testing.TB: the project's one way to build and run
// SeaweedFS. It implements the methods seaweed calls (Helper, Logf, Fatalf,
// Cleanup); the embedded nil TB makes any other call panic loudly instead
// of silently doing nothing. Fatalf panics; SeaweedCall turns that back
// into an error.
type ProgramTB struct {
	testing.TB
	LogPrefix string // put before every Logf line

	mu       sync.Mutex
	cleanups []func()
}

// tbFatal is the panic value of ProgramTB.Fatalf, recovered by SeaweedCall.
type tbFatal struct{ msg string }

func (*ProgramTB) Helper() {}

func (p *ProgramTB) Logf(format string, args ...any) { log.Printf(p.LogPrefix+format, args...) }

func (*ProgramTB) Fatalf(format string, args ...any) {
	panic(tbFatal{fmt.Sprintf(format, args...)})
}

func (p *ProgramTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// Close runs the cleanups, last registered first, as testing does.
func (p *ProgramTB) Close() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// SeaweedCall runs f (a internal/seaweed call given a ProgramTB), returning
// a Fatalf of that call as an error; any other panic goes on.
func SeaweedCall(f func()) (err error) {
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
