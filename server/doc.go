// Package server runs the notebook operations — pull, commit, status and
// log — over the three states of DESIGN §1: L (the visible directory), P
// (private state under Config.PrivateRoot) and R (the accepted notebook in
// the store). It owns the error envelope's codes (errors.go) and maps every
// lower-level failure to them in one place (errmap.go). It knows nothing of
// MCP or the CLI; both are thin adapters over Engine.
//
// Data flow of one call (pull or commit):
//
//	request path ─ResolveDir─▶ L (absolute, at or below WorkspaceRoot)
//	             ─lockDir────▶ in-process mutex + lock file in P
//	P/dirs/<h>   ─loadDir────▶ baseline A (generation, head, path→file ID),
//	                           stat cache, recovery flag
//	             (recovery flag set: resynchronise first, see recovery.go)
//	L            ─scan───────▶ tree L (path→file ID); only files whose stat
//	                           differs from the cache (or is racy) are read,
//	                           through os.Root, and checked against §6
//	R            ─ReadCurrent / Publish's build callback─▶ manifest
//	             ─objects.sync▶ missing packs fetched in parallel into the
//	                           shared cache P/stores/<h>/chains/<h>
//	merge.Trees(A, L, R) ─▶ result tree (+ conflicts)
//	commit only: the result is packed (objects the chain lacks) and
//	             published conditionally; a lost race re-merges
//	recovery flag ─▶ rewrite L (only changed files, each atomically)
//	             ─▶ baseline + stat cache recorded ─▶ flag cleared
//
// Private state (state.go) is keyed by BLAKE3 of the store identity and the
// absolute L path, so two stores never share a baseline; the object cache
// is keyed by the store identity and by the first pack of the active chain,
// so everything in one cache directory belongs to the chain and a commit
// can skip objects the cache already holds without re-uploading them.
//
// Pull returns CONTENT_CONFLICT/MERGE_CONFLICT after it has written the
// conflict blocks and recorded the new baseline, so the caller learns
// which files need editing; nothing is lost and the next commit refuses
// until the blocks are resolved.
//
// Every file written into L first goes to a temporary sibling named
// ".slivingdoc-tmp-<16 hex>.tmp" and is renamed over the target; the scan
// ignores such names and recovery removes the leftovers of a crash.
package server
