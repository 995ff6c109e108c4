// Package server runs the notebook operations — pull, commit, status and
// log — over the three states of DESIGN §1: L (the visible directory), P
// (private state under Config.PrivateRoot) and R (the accepted notebook in
// the store). Its errors are the catalogued ones of package server/diag,
// which also maps every lower-level failure to them in one place
// (diag.Map; server/dircall's MapErr adds the engine's own). It knows nothing of MCP or
// the CLI; both are thin adapters over Engine.
//
// A call on one directory is a session: server/dircall's Call (its
// locks, A, the scan of L, the object source, where a file ID's content
// is found, the merge and the plan) with the root's steps hung on it
// (session.go: begin and end).
//
// Data flow of one call (pull or commit):
//
//	request path ─ResolveDir─▶ L (absolute, at or below WorkspaceRoot,
//	                           checked lexically and through os.Root:
//	                           rules.Workspace)
//	             ─begin──────▶ in-process mutex per L + lock file in P
//	                           (dircall.Open); baseline A (generation,
//	                           head, path→file ID), stat cache
//	             (recovery flag set: resynchronise first, server/pull)
//	L            ─scan───────▶ tree L (path→file ID): one stat per file,
//	                           directories listed in parallel; only files
//	                           whose stat differs from a trusted cache
//	                           entry are read (through os.Root) and checked
//	                           against the content rules of DESIGN §6
//	R            ─ReadCurrent (pull) or inside Publish's build (commit)
//	             ─sync───────▶ missing packs fetched in parallel into the
//	                           shared cache P/stores/<h>/chains/<h>
//	                           (package objcache)
//	MergeWith(A, L, R) ─▶ result (R == A yields L, L == A yields R,
//	                       otherwise plan.Merge over merge.Trees)
//	commit only: objects the chain lacks are packed and published
//	             conditionally; a lost race re-merges in the next build
//	             (format 4: registered as a proposal and folded; a
//	             declined one is rebuilt on the newer state)
//	plan ─▶ old and new content of each changed file, loaded up front
//	        (package server/plan; ignored paths left out)
//	rewrite ─▶ recovery flag, removals, parallel atomic writes, dir fsyncs
//	        ─▶ baseline + stat cache recorded ─▶ flag cleared
//	        (package server/rewrite)
//
// Decisions worth knowing:
//   - P's records, their files and formats (the baseline, the stat cache,
//     the recovery flag, the rewrite, pending and store records, the lock)
//     are package server/pstate's; the engine decides what to record and
//     when. A as the engine holds it, loaded and saved through what a
//     long-lived engine remembers of the directory, is server/dirstate's.
//     A directory's records are keyed by BLAKE3 of the store
//     identity and the absolute L path (state.go), so two stores never
//     share a baseline. The object caches (package objcache, in dircall.Env)
//     are keyed by the store identity and by the start of the active
//     chain: everything in one cache directory belongs to the accepted
//     chain, so a commit skips uploading any object the cache holds. The
//     engine maps their failures (server/dircall's Env) and gives them what they need
//     of P's baselines.
//   - Pull returns CONTENT_CONFLICT/MERGE_CONFLICT after it has written the
//     conflict blocks and recorded the new baseline, so the caller learns
//     which files to edit; the next commit refuses until they are resolved.
//   - A commit refused for READ_ONLY_PATH resets exactly the refused files
//     to the baseline (a file added there is removed) and keeps every other
//     local edit; nothing is published.
//   - A file whose mtime is within the racy window of the scan that read it
//     is re-read next time (workdir/scan.go: 50 ms, 2 s on whole-second time
//     stamps), so an edit in the same timestamp tick is never missed.
//   - A long-lived engine (Config.LongLived: serve) keeps, per L, the
//     directory listings an inotify watch proves unchanged, the stat
//     cache and the baseline, each used only while P's file is proved to
//     be the one it was kept from (server/dirstate, workdir/watched.go;
//     server/dircall's memory.go takes them at the start of a call and
//     hands them back at its end); the recovery flag and the pending
//     record are still read from P on every call. It also replies to a commit
//     before keeping the published pack in the cache and recording the
//     highest generation (storeview.AfterReply: the next call and Close wait for
//     that work) and keeps the content its commits published
//     (objcache.Recent).
//     Every commit reads `current` before it builds: no state is guessed.
//   - Files of L are written through a temporary sibling named
//     ".slivingdoc-tmp-<16 hex>.tmp" renamed over the target; while a
//     recovery is pending the scan sets such names aside and the
//     resynchronisation removes them (otherwise they are user files).
//   - Ignore rules (workdir/ignore.go) drop entries in the scan before anything
//     reads them; A's files at ignored paths enter the merge as A's
//     ("virtual", server/plan), so they are neither published from L
//     nor written, overwritten or removed in L. Commits whose added lines
//     hold a recognised credential are refused before anything changes
//     (server/commit's RefuseSecrets maps what rules.Secrets finds over
//     server/secrets).
//   - Each publication attempt records, in P and without fsync, before the
//     proposal that any writer's fold could accept is registered,
//     its publication ID and the changes of L it publishes
//     (pstate.PendingRecord, built by server/build; adopted by
//     server/pending's Tracker): a
//     commit accepted and then interrupted before A was recorded is taken
//     as common ground by the next merge instead of conflicting with
//     itself.
//   - Every commit publishes by format version 4 (publish_v4.go) through
//     package publish (register a proposal; one writer folds the pending
//     ones in one conditional write); on a store of version 1–3 the
//     commit's write is the upgrade. The build is one attempt per version
//     registered (server/build); the result is the commit's own
//     generation and L gets that generation's tree. A version-4 `current` reads through
//     remote's read-only view, so the history readers need no second
//     path; its pending record marks the call, which the next commit
//     resumes under the same ID while it is undecided, and which the next
//     pull settles, without building a new version, before its baseline
//     moves on (pull_v4.go). What an accepted commit leaves to the
//     background is server/commit's (e.background, which Close waits
//     for): the rollups and checkpoint its generation is due for and, at
//     a generation a rule picks, the sweep of the store's decided garbage
//     and of the history below the oldest listed checkpoint once it is
//     outside --retain (remote/retain_v4.go). So are publish's options;
//     the estimates publish times its waits from are learned from the
//     store's own requests (server/storeview).
//   - The engine reads and writes its store as server/storeview wraps
//     it: through the host's copies of the objects writers exchange
//     (keyed by the store's ID under P/stores/<key>/objects), timed for
//     publish, and proved once a day (the probe's verdict; Probe stays
//     here, probe.go, and the mapping of its errors is diag.MapProbe).
//     Which store it is is storeview's too (storeview.Identity, in dircall.Env):
//     its ID, under whose key P keeps every record of the store, and the
//     check of every read of `current` against the highest generation
//     seen; so is the store each directory remembers. The refusals of a
//     directory used with another store (STORE_MISMATCH) or whose record
//     the store outlived (BASELINE_LOST) are here, in remembered.go.
//   - A cached object failing its check drops the damaged packs
//     (objcache.Caches.Heal) and runs the operation once more with fresh
//     copies from the store (heal.go).
//   - A file of L still holding conflict blocks is never merged again
//     (merge.Unresolved): it is kept as it is, reported CONFLICT_MARKERS,
//     and the baseline holds that path's old base (pstate.Baseline's Held,
//     content in P/dirs/<h>/held) until the blocks are resolved, so blocks never
//     nest and the remote's newer lines merge in afterwards.
//   - L is rewritten, and an interrupted rewrite settled, by package
//     server/rewrite (rewrite.go keeps the session's names for it).
//     Before L is rewritten, P records the rewrite (pstate.RewriteRecord):
//     each path's content before and after, and the next baseline's. A
//     resynchronisation after a crash rolls the merge base forward where
//     the rewrite provably reached, so the tool's own half-finished
//     rewrite never conflicts with the next remote edit beside it.
//   - What a call may write is package server/rules: the workspace rules
//     of a request path, the writable and read-only sets, the input rules
//     and which lines and names of a commit hold a credential. Its checks
//     only read and come before the first write; the engine maps their
//     refusals to its catalogue (pathErr in resolve.go; a commit's checks
//     are server/commit's, run by commit.go in a fixed order).
//   - A request path at or below an existing notebook directory of the
//     same store runs on that directory (resolve.go, over rules.Outermost);
//     a new one that would contain another is refused (CONTAINS_NOTEBOOK,
//     rules.Contained). P is keyed by the
//     resolved path, so a symlink alias shares the real path's state and
//     lock. A lost or corrupt baseline is refused (BASELINE_LOST), never
//     taken for "never pulled".
//   - Status and Log never write L. Status of a directory never pulled
//     lists every file as added.
//   - History for people is package server/history, and so are its
//     results (history.Entry, history.Change, history.BlameResult):
//     History, Show, FileAt, Diff, Log and Blame (history.go, log.go,
//     blame.go) open a history.View on the state they read and the cache
//     they synced, and map its errors; its publications() is the one
//     function that knows the manifest's layout. LocalDiff compares the
//     baseline with L. Restore and Revert (history_restore.go) take the
//     files history computes (View.Restore, View.Revert) and write L as a
//     local edit through plan and rewrite.Materialise, leaving the baseline as it
//     was, so the next commit publishes them through the ordinary merge.
package server
