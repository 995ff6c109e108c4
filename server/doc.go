// Package server runs the notebook operations — pull, commit, status,
// log and history, restore and revert, watch — over the three states of
// DESIGN §1: L (the visible directory), P (private state under
// Config.PrivateRoot) and R (the accepted notebook in the store). It
// knows nothing of MCP or the CLI; both are thin adapters over Engine.
// Its errors are the catalogued ones of package server/diag, which also
// maps every lower-level failure to them in one place (diag.Map;
// server/dircall's MapErr adds the engine's own).
//
// The root holds the entry points and what they share; the work of each
// call is done by the engine's packages below it, which never import it
// (a call walks down the layers and comes back by return values):
//
//   - engine.go: Config, New and Close. New builds once what every call
//     is lent, server/dircall's Env (the store as server/storeview wraps
//     it, the notebook, the object caches, which store it is, the probe's
//     verdict, the ignore rules, the path sets, a long-lived engine's
//     memories), and what every commit publishes with, server/commit's
//     Publishing (publish's options, the store's learned estimates, the
//     background work of accepted commits, which Close waits for).
//   - session.go: begin, the start every call on a directory shares: the
//     request path resolved (resolve.go, over server/rules: at or below
//     the workspace root; the outermost notebook directory of the store at
//     or above it, CONTAINS_NOTEBOOK when it would contain one), the store
//     proved (probe.go) and checked against the one the directory
//     remembers (remembered.go: STORE_MISMATCH), then dircall.Open: the
//     in-process mutex per L and the lock file in P, A and the stat cache
//     loaded. Each call ends with dircall.Call.End, which releases them.
//   - state.go: where a directory's records in P are, keyed by the store
//     identity and L's resolved path, so a symlink alias shares the real
//     path's state and lock and two stores never share a baseline.
//   - heal.go: a call that failed because a cached object was corrupt
//     drops the damaged packs (objcache.Caches.Heal) and runs once more.
//   - env.go and failpoint.go: the names the engine's API keeps for
//     dircall's Result and FileStat and for server/rewrite's failpoints.
//
// One paragraph per call:
//
// Pull and PullImplied (pull.go) begin the call, open L (creating it),
// refuse a directory the caller did not name that holds files but no
// record (PullImplied), settle a version-4 call of this directory
// interrupted after it registered (commit.SettleV4: accepted, or
// forgotten, before A moves on), then synchronise (pull.Run: the
// recovery flag settled and resynchronised first, `current` read, the
// caches synced, the merge of A, L and R planned and written into L under
// the recovery flag by server/rewrite, A recorded). Conflicts are written
// as blocks and reported as CONTENT_CONFLICT/MERGE_CONFLICT with the new
// baseline recorded.
//
// Commit (commit.go) checks the message (commit.CheckMessage), begins
// the call and hands it to commit.Run: the checks before the first write
// in a fixed order, then the publication by format 4 through package
// publish, each version built by server/build, and the finish that
// brings L and A to the accepted generation's tree.
//
// Status (status.go) begins the call, scans L, reads `current`, takes an
// accepted pending publication (server/pending) and an interrupted
// rewrite (rewrite.Settle, not recorded) as the tool's, and lists L's
// delta from A; it never writes L.
//
// Log, History, Show, FileAt, Diff and Blame (log.go, history.go,
// blame.go) read `current`, sync the caches and open a history.View
// (server/history) on them; LocalDiff compares A with L under the call's
// lock. None writes L or the store.
//
// Restore and Revert (history_restore.go) begin the call as a commit does
// (pulled, present, resynchronised, scanned), take the files history
// computes (View.Restore, View.Revert), refuse to replace uncommitted work
// unless forced (then a copy is kept in P first) and write L as a local
// edit through pull.Materialise, leaving A as it was: the next commit
// publishes them through the ordinary merge. The session type is what
// their steps still hang on the call.
//
// Watch (watch.go) polls `current` by HEAD and reads the history above
// what it printed when its ETag moves.
//
// The invariant the root owns: one call per directory at a time (the
// locks, taken in begin before anything is read), and each call's steps
// in the order the crash rules of docs/local-state.md require: the locks,
// then recovery, then the checks, then the first write. The steps
// themselves, and the invariants of each, are the packages': the checks
// and the publication server/commit's, the build server/build's, the
// synchronisation and recovery server/pull's, the rewrite of L and its
// settling server/rewrite's, the pending record server/pending's, A and
// what a long-lived engine keeps server/dirstate's, the call itself
// server/dircall's.
package server
