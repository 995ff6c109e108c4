// Package history is history for people: what each retained publication
// changed, a file as it was at a generation, the trees of two generations
// compared, the log's walk back from the head, and blame (which
// publication last changed each line of a file). The engine (package
// server) opens a View on the state of `current` it read and the object
// cache it synced, returns what the View returns as its results (Entry,
// Change, BlameResult: the types the CLI prints), and maps its errors to
// its codes.
//
// Map:
//
//	View (view.go)          one observed state: the retained publications
//	                        (publications.go), the tree at a generation
//	                        (HeadAt), a publication (PublicationAt), the
//	                        queries Entries (a Query), Show, FileAt and
//	                        Diff, whose results are Entry and Change
//	Engine (view.go)        what the View asks of the engine: the chains
//	                        of the store's history, the caches' names, and
//	                        the fetch of a chain's packs into its cache
//	Objects (view.go)       the object cache the View reads (a cas.Source
//	                        that can say, without I/O, which open cache
//	                        holds an object)
//	diff.go                 trees compared (subtrees with equal IDs are
//	                        skipped), Change with its diffstat, path rules
//	log.go                  Log: the walk of commits from the head (the
//	                        cache filled with the whole chain on a miss)
//	blame.go                BlameQuery, its checks, and the blame walk
//	                        over the retained publications (BlameResult)
//	blame_diff.go           the versions a blame walks, read as chunks, and
//	                        their line diff
//	blame_index.go          the changed-paths index in P
//	blame_cache.go          a whole file's blame kept in P
//	restore.go              Target: what a restore (View.Restore) or a
//	                        revert (View.Revertible, View.Revert: the
//	                        inverse of a publication merged with the
//	                        files now) makes of a directory's files; the
//	                        engine plans and writes it
//	errors.go               the refusals and failures the engine maps
//
// Data flow:
//
//	`current` ─publications(from, to)─▶ the retained publications of a
//	           generation range and the packs beyond the active chain that
//	           hold them ─Engine.Fetch─▶ those packs in the object cache
//	head ─commit─▶ tree ID ─diffTrees─▶ changed paths ─▶ Change (diffstat
//	           and, when asked, both versions' content)
//
// The invariant it owns: history readers never write L or the store (the
// only files they write are the blame cache and the changed-paths index,
// under the directory in P the engine names, and losing them costs only
// time); every reading of the retained publications goes through one
// function, publications, the only code here that knows the manifest's
// layout (Log, which reads only the recent increments of the active
// chain, lists them through remote.Notebook.Publications); and a
// generation outside the retained window is reported as such
// (*UnavailableError), never as an empty history.
//
// Errors: a refusal of the request is *ArgumentError or *UnavailableError;
// a failure of a step is wrapped in *OpError naming the step; errors the
// Engine's methods return pass through unchanged. The engine maps them to
// its codes. This package imports cas, merge, remote, server/pstate and
// server/workdir (for the bound of a path), never package server, and
// does not know how the object caches are kept.
package history
