// Package rules is what a call may write: the checks a pull or commit
// makes of its request and of the changes it would publish, before
// anything is changed.
//
// Map:
//
//	Workspace (workspace.go)  the tree requests may address: Resolve takes
//	                          a request path ("" the default directory,
//	                          "~/" expanded, relative to the default) to an
//	                          absolute directory at or below the root,
//	                          checked lexically and through os.Root, so a
//	                          symlink cannot lead outside; Open opens such
//	                          a directory through the root. Within and
//	                          RealPath are the comparisons both use
//	nesting.go                which notebook directory a request path
//	                          addresses: the outermost one at or above it
//	                          (Outermost), or none when it would contain
//	                          one (Contained); the engine says which
//	                          directories are the store's notebook
//	                          directories
//	Sets (pathsets.go)        the writable and read-only path sets,
//	                          normalised once; Check says whether a change
//	                          of a path is allowed (the longest matching
//	                          entry decides)
//	inputs.go                 the rules of the two free-form inputs, shared
//	                          by the engine, the MCP adapter and the CLI:
//	                          ExpandHome for paths, CheckMessageText for
//	                          commit messages
//	Secrets (secrets.go)      the files a commit would publish whose added
//	                          lines, or whose new names, hold a recognised
//	                          credential (package server/secrets finds
//	                          them; this decides which lines and names are
//	                          the commit's own)
//
// Data flow: the engine (package server) resolves every request path
// through a Workspace, and to the notebook directory it addresses, before
// it takes a lock; a commit checks its message
// with CheckMessageText, then, once L is scanned, hands Secrets the paths
// it changes against the baseline A and Sets.Check each changed path. Each
// answer is a value — a sentinel error, a Refusal, a list of Secret — that
// the engine turns into its catalogued error.
//
// The invariant it owns: nothing a call refuses is changed. A request path
// outside the workspace, a path outside the writable set or inside a
// read-only one, a message that breaks the input rules, and a commit
// adding a recognised credential are refused before L, P or the store
// change, with the catalogued reason: these checks only read, and the
// engine makes them before the call's first write. (The one change a
// refusal makes is the documented one: a commit refused for a read-only
// path resets exactly the refused files of L to A.)
//
// It builds on cas and merge (IDs and line ranges), server/secrets (the
// credential rules), server/workdir (the bound of a path) and the
// standard library. It never imports package server nor the error
// catalogue (server/diag): its refusals are its own values, mapped by the
// engine where it makes the call.
package rules
