package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// dropWriter is the process's stderr for log records: a bounded queue
// drained by one goroutine, so that no call ever waits on stderr. A host
// that pipes stderr and never reads it fills the pipe (64 KiB on Linux);
// from then on records queue up to limit bytes and the rest are dropped and
// counted, and the count is reported in a record of its own as soon as
// stderr takes writes again. A stderr that fails (closed) drops everything
// from then on; the server goes on serving.
type dropWriter struct {
	w     io.Writer
	limit int
	// start starts the drainer on the first record: most CLI processes
	// log nothing, and a goroutine started for nothing costs them a
	// thread's wake-up (or its creation).
	start sync.Once

	mu      sync.Mutex
	queue   [][]byte
	size    int
	dropped uint64
	busy    bool // the drainer holds records it has not written yet
	broken  bool
	wake    chan struct{}
	idle    *sync.Cond
}

// logQueueBytes bounds the queued records: ~250 records of ~265 bytes, as
// much again as a Linux pipe holds.
const logQueueBytes = 64 << 10

func newDropWriter(w io.Writer, limit int) *dropWriter {
	d := &dropWriter{w: w, limit: limit, wake: make(chan struct{}, 1)}
	d.idle = sync.NewCond(&d.mu)
	return d
}

// Write queues one record (slog handlers write a record per call). It
// never blocks on the underlying writer.
func (d *dropWriter) Write(p []byte) (int, error) {
	d.start.Do(func() { go d.drain() })
	d.mu.Lock()
	if d.broken || d.size+len(p) > d.limit {
		d.dropped++
		d.mu.Unlock()
		return len(p), nil
	}
	d.queue = append(d.queue, bytes.Clone(p))
	d.size += len(p)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (d *dropWriter) drain() {
	for range d.wake {
		for {
			d.mu.Lock()
			batch, dropped := d.queue, d.dropped
			d.queue, d.size, d.dropped = nil, 0, 0
			d.busy = len(batch) > 0 || dropped > 0
			if !d.busy {
				d.idle.Broadcast()
				d.mu.Unlock()
				break
			}
			d.mu.Unlock()
			if dropped > 0 {
				batch = append([][]byte{droppedRecord(dropped)}, batch...)
			}
			for _, rec := range batch {
				if _, err := d.w.Write(rec); err != nil {
					d.mu.Lock()
					d.broken = true
					d.mu.Unlock()
					break
				}
			}
		}
	}
}

// droppedRecord is the record that reports how many were dropped, in the
// same text format as every other record.
func droppedRecord(n uint64) []byte {
	var b bytes.Buffer
	h := slog.NewTextHandler(&b, nil)
	r := slog.NewRecord(time.Now(), slog.LevelWarn, "log records dropped: stderr was not drained", 0)
	r.AddAttrs(slog.String("module", "cli"), slog.Uint64("dropped", n))
	_ = h.Handle(context.Background(), r)
	return b.Bytes()
}

// Flush waits until every queued record is written, at most timeout (a
// stderr nobody reads must not hold up the exit either).
func (d *dropWriter) Flush(timeout time.Duration) {
	d.mu.Lock()
	pending := (len(d.queue) > 0 || d.dropped > 0 || d.busy) && !d.broken
	d.mu.Unlock()
	if !pending {
		return // nothing to wait for: no goroutine, no timer
	}
	done := make(chan struct{})
	go func() {
		d.mu.Lock()
		for (len(d.queue) > 0 || d.dropped > 0 || d.busy) && !d.broken {
			d.idle.Wait()
		}
		d.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// stderrLog is the dropWriter on os.Stderr that newLogger uses; main
// flushes it before the process exits.
var stderrLog struct {
	once sync.Once
	w    *dropWriter
}

func flushLogs(timeout time.Duration) {
	if w := stderrLog.w; w != nil {
		w.Flush(timeout)
	}
}
