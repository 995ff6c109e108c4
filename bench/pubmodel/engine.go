package pubmodel

import (
	"math/rand/v2"
	"time"
)

// op is the kind of store request, which decides its price and whether
// it holds a key.
type op int

const (
	opGet    op = iota // GET or HEAD: a read
	opPut              // unconditional PUT of an immutable object
	opList             // LIST with a prefix
	opCond             // conditional write (If-Match / If-None-Match): holds its key
	opDelete           // DELETE (free at S3 prices, off the commit path)
)

// req is one store request (or n identical ones sent in parallel, which
// cost one round trip together). apply runs atomically at the instant the
// store applies it and returns the reply.
type req struct {
	op    op
	label string // what it is for, the row of the request table
	key   string // the key a conditional write holds
	n     int    // parallel requests of the same kind; 0 means 1
	apply func() any
}

// fault is what the engine did to a request besides applying it.
type fault int

const (
	faultNone      fault = iota
	faultAmbiguous       // the reply was lost: the writer cannot tell if it applied
)

// env is everything a writer may use: one store, one clock, one random
// source. The discrete-event simulation (sim.go) and the exhaustive
// explorer (explore.go) both implement it, so the protocol code that
// they check is the same code.
type env interface {
	now() time.Duration
	// send issues r for w; done runs with the reply unless w crashed.
	send(w *writer, r req, done func(reply any, f fault))
	// sleep resumes w after d of model time.
	sleep(w *writer, d time.Duration, done func())
	rand() *rand.Rand
	store() *store
	// finish reports w's commit: accepted at generation gen (0: not
	// accepted, with the reason).
	finish(w *writer, gen int, why string)
	// registered tells the agent that w's first version is stored: a
	// commit queued behind w may now register chained to it (Chain).
	registered(w *writer)
}

// writer is one commit call in progress (an agent commits its calls one
// after another). Protocol state lives in the protocol's own struct.
type writer struct {
	agent   int
	id      int           // the publication ID: increasing in the order calls start
	start   time.Duration // the instant the agent wanted to commit
	began   time.Duration // the instant the call started
	crashed bool
	done    bool
	gen     int // the generation that accepted it (0: not yet)
	// pred is the agent's call this one was chained behind (Chain): its
	// versions are built on pred's newest version, not on a generation.
	pred *writer
	// prev is the agent's call before this one (for the report: this
	// one was queued behind it if due before prev ended at end).
	prev  *writer
	end   time.Duration
	known int // the generation the agent's cache reaches
	proto protocol
	// requests by label, for the report
	reqs map[string]float64
	cond int // conditional writes sent
	lost int // of them refused (a lost race)
}

// protocol is one publication protocol driving a writer.
type protocol interface {
	begin(e env, w *writer)
}
