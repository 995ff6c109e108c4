package server

import "github.com/slivingdoc/slivingdoc/server/dircall"

// The engine's part every call uses is server/dircall's Env (e.env),
// built once in New. A pull's or a commit's result is dircall's too;
// these are its names in the engine's API.

// FileStat is one file's line delta.
type FileStat = dircall.FileStat

// Result is the outcome of a successful pull or commit.
type Result = dircall.Result
