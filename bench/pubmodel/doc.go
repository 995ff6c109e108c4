// Package pubmodel is a model of publication at cloud latency: format
// v4's fold protocol (docs/publication.md) exactly as that document
// says, and format v3's group commit roughly, run against a modelled
// object store in virtual time. It checks the design against the fleet
// targets before anyone implements it; it is not the product's code.
//
// Map:
//
//	store.go    the modelled bucket: `current` (generation, ETag, the
//	            IDs per generation, declined versions, the write's time),
//	            registered proposal versions keyed (G, ID), fold markers,
//	            group packs; each method one request applied atomically
//	engine.go   requests (kind, label, parallel count, apply), faults,
//	            the env a protocol runs in, the writer (one commit call)
//	v4.go       the v4 protocol: read, register, LIST, fold or wait,
//	            takeover, ambiguous replies, rebuilds under one ID;
//	            with Params.Chain, a commit queued behind its agent's
//	            pending one registers chained to it (folded only after
//	            it, declined when its predecessor's version is not the
//	            one accepted)
//	today.go    v3 roughly: plain attempt, registration, lead marker,
//	            leader and followers, today's backoff and retry limits
//	sim.go      the discrete-event simulation: one event queue ordered
//	            by (time, issue order), one seeded source; round trips,
//	            conditional writes holding their key (queued, or 429),
//	            agents committing once per window (with Chain, a queued
//	            commit starts once its predecessor registered), crashes
//	            (ending every call of the agent), lost replies; Run
//	            audits the store at the end and reports the cycle and
//	            the queued commits that missed the next write
//	report.go   per-commit requests by kind, the publication path, cost
//	            at S3 Standard prices, the printed report
//	explore.go  the explorer: every order of 2-3 writers' requests with
//	            faults, by replaying choice prefixes (Explore), seeded
//	            samples (Sample), one schedule step by step (Replay)
//	cmd/pubmodel  the command that prints a fleet's figures
//
// Nothing runs concurrently and nothing sleeps: a protocol is written in
// continuation style against env, so the simulation and the explorer
// drive the same code, and a run or a schedule replays from its seed or
// its choices.
package pubmodel
