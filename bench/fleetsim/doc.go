// Package fleetsim simulates a fleet of agents on one notebook at a scale
// two cores cannot run as processes (issue 18 item 4, DESIGN §10): many
// server.Engine instances in one process, each with its own visible
// directory L and private root P, all on one memstore.Mem behind a latency
// model, committing at random instants.
//
// Data flow:
//
//	Config ─▶ Run
//	  memstore.Mem ◀─ Latency (latency.go): every request sleeps a round trip
//	  │             (up leg, server work, down leg; optional jitter and a
//	  │             per-request bandwidth), conditional writes of one key
//	  │             are applied one at a time, each holding the key for
//	  │             CondService, as a real store serialises them; requests
//	  │             are counted by kind and conditional outcome
//	  set-up (latency off, not counted): a seed engine commits one file per
//	  │      agent, every agent's engine pulls
//	  agents (fleet.go): agent i appends a tagged line and ~1 KB of text to
//	  │      its own file at its instant of each window (seeded), commits
//	  │      through Engine.Commit, retries a REMOTE_BUSY as an agent would
//	  audit (audit.go): a fresh engine pulls the final notebook; every line
//	  │      of an accepted commit must be there exactly once
//	  ▼
//	Result ─▶ report.go (Markdown table, JSON); the requests priced at
//	          S3 Standard's (bench/cost.go), per million accepted commits
//
// Time: the engines run in real time, not virtual. Config.Scale
// compresses it: every modelled duration (round trips, service times, the
// commit window) is divided by Scale before it is slept, every measured
// duration is multiplied by Scale before it is reported, and the engines'
// publication protocol runs on a model clock (clock.go, through
// server.Config.Sleep and Now): its backoff, version 4's waits and the
// round trips it measures are in the model's time too. So the reported
// figures are in the model's time, and what Scale does not compress is
// the engines' CPU work (and the local file system's): understated by the
// factor 1/Scale below 1. Scale 1 (the default) is exact apart from the
// shared CPU, which Result.CPU reports (cores busy near 2 means the
// figures include queueing for the simulation's CPU, not only for the
// store). A Scale below 1 is slow motion, for a fleet whose engines' CPU
// the machine cannot supply in real time (1,000 agents on 2 shared
// cores): the figures are then those of agents on machines 1/Scale times
// faster than this one's share.
//
// The engines are not LongLived (no inotify-backed directory memory):
// 1,000 watches would exceed the machine's inotify instance limit (128
// here), and every commit's scan then lists L and re-reads the files the
// previous call wrote (the stat cache trusts a file only after a later
// scan), which is part of the CPU figure.
// The publish mode (Config.Engine = EnginePublish, `-engine publish`;
// v4agent.go, v4run.go, report_v4.go) replaces the engines by agents
// that publish through package publish (format v4), which the engine
// does not call yet: each agent keeps its file in memory and its own
// object cache, catches up from the generation it knows to each
// `current` it is given by fetching the proposals, group packs and
// segments that manifest names (all of them, or with CatchUpLazy only
// what its build and the fold read), builds a head commit and pack on
// the state's head, and calls Publisher.Commit. Catch-up's requests are
// counted apart (Result.CatchUp); the audit adds that every generation an
// agent was told names its own publication ID (Result.GenAudit).
//
// The latency model lists as S3 does with StartAfter when the store it
// wraps can (Latency.ListAfter): publish lists only the window, and a
// listing of every proposal of the run would cost the simulation's CPU
// and the bytes of its down leg more with every minute of a run.
//
// Config.Breakdown (`-breakdown`; breakdown.go) tells where the measured
// commits' time went: each commit's queue behind its agent's previous
// commit, its prologue (to its registration landing), the wait from
// there to the landing of the write of `current` that accepted it, and
// its learning of that; and how many writes landed between its
// registration and its acceptance (its fold cycles), for all commits and
// for the slow ones. The won writes are seen by the latency model as it
// applies them (Latency.onWrite), the registrations through a view of
// the store per agent (agentStore), which also notes every request of
// the agent's publisher and catch-up: from them the turn (a landing to
// the next write's sending) is split by the next folder's requests
// (its learning, the gather, the rounds, the last LIST, the fold of
// what it added, the uploads; TurnParts), with when commits registered
// against that folder's LISTs, and the learning of each commit by the
// read of `current` that told it (its lateness after the landing, its
// round trip, the rest). Tails (tails) decompose the commits slower
// than the bound and the slowest 5% against their agent's previous
// commit (the gap between their instants, its latency, its cycles and
// learning: the queue behind it) and against the last LIST of the first
// write sent after their registration (taken by it or missed).
//
// Arrival instants, jitter and contents are seeded; which writer wins a
// race is up to the scheduler, so two runs agree in distribution, not
// byte for byte.
package fleetsim
