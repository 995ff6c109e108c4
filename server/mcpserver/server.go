package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/slivingdoc/slivingdoc/server"
)

// ImplementationName is the name the server advertises in initialize.
const ImplementationName = "slivingdoc"

// Engine is the part of *server.Engine the adapter uses; tests substitute
// a fake to exercise the envelope without a store.
type Engine interface {
	PathSets() (writable, readOnly []string)
	ResolveDir(path string) (string, error)
	Pull(ctx context.Context, path string) (*server.Result, error)
	Commit(ctx context.Context, path, message string) (*server.Result, error)
}

var _ Engine = (*server.Engine)(nil)

// Options configure the adapter.
type Options struct {
	Version string       // the release version advertised in initialize
	Logger  *slog.Logger // start and completion records; nil discards
	// Redact lists literal strings never to show in any result or log
	// record at info level (the private root, secret values).
	Redact []string
}

// Adapter serves the two tools for one engine.
type Adapter struct {
	eng   Engine
	log   *slog.Logger
	sets  pathSets
	scrub scrubber
	dir   string

	version      string
	instructions string
	tools        []mcp.Tool             // sorted by name, as tools/list sends them
	handlers     map[string]toolHandler // by tool name
}

// toolHandler runs one tool call. It returns a Go error only for a
// cancelled request, which the transport answers as a protocol error.
type toolHandler func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// New builds the MCP server for eng. The notebook directory named in the
// instructions is eng.ResolveDir("").
func New(eng Engine, opts Options) (*Adapter, error) {
	dir, err := eng.ResolveDir("")
	if err != nil {
		return nil, fmt.Errorf("mcpserver: resolve the notebook directory: %w", err)
	}
	writable, readOnly := eng.PathSets()
	a := &Adapter{
		eng:   eng,
		log:   opts.Logger,
		sets:  pathSets{writable: writable, readOnly: readOnly, ignore: ignorePatterns(eng)},
		scrub: newScrubber(opts.Redact),
		dir:   dir,
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With("module", "mcp")
	a.version = opts.Version
	a.instructions = instructions(dir, a.sets)
	a.tools = tools(a.sets)
	sort.Slice(a.tools, func(i, j int) bool { return a.tools[i].Name < a.tools[j].Name })
	a.handlers = map[string]toolHandler{}
	for _, t := range a.tools {
		a.handlers[t.Name] = a.handler(t.Name)
	}
	return a, nil
}

// newDiagnosticID returns 16 lowercase hex characters, fresh per call.
func newDiagnosticID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// handler runs one tool. It returns a Go error only for a cancelled
// request, which the transport turns into a protocol error; everything
// else is a result the adapter built itself.
func (a *Adapter) handler(tool string) toolHandler {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		id := newDiagnosticID()
		start := time.Now()
		a.log.Info("tool call", "mcpReqID", id, "tool", tool)
		defer func() {
			if p := recover(); p != nil {
				res, err = a.fail(tool, id, start, internalError(fmt.Errorf("panic: %v", p))), nil
			}
		}()

		in, derr := decodeArgs(req.Params.RawArguments, tool)
		if derr != nil {
			return a.fail(tool, id, start, derr), nil
		}
		var r *server.Result
		if tool == ToolCommit {
			r, err = a.eng.Commit(ctx, in.path, in.message)
		} else {
			r, err = a.eng.Pull(ctx, in.path)
		}
		if err != nil {
			if ctx.Err() != nil {
				a.log.Info("tool call done", "mcpReqID", id, "tool", tool, "code", "CANCELLED", "ms", since(start))
				return nil, ctx.Err()
			}
			var de *server.Error
			if !errors.As(err, &de) {
				de = internalError(err)
			}
			return a.fail(tool, id, start, de), nil
		}
		ok := newOK(r, a.sets)
		a.log.Info("tool call done", "mcpReqID", id, "tool", tool, "code", ok.Code,
			"generation", ok.Generation, "files", ok.FilesChanged, "ms", since(start))
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(okText(ok, a.sets))},
			StructuredContent: ok,
		}, nil
	}
}

// internalError is the report for a failure the engine did not classify
// (a panic, an error that is not a *server.Error).
func internalError(cause error) *server.Error {
	return &server.Error{
		Code:    server.CodeEngineFailed,
		Reason:  server.ReasonInternal,
		Action:  server.ActionCheckHost,
		Message: "The server failed unexpectedly; the log record with this diagnosticId has the cause.",
		Cause:   cause,
	}
}

// fail builds the error result and writes the completion record. The
// record's cause is scrubbed like the result; the raw cause, which may name
// keys or private paths, is kept for debug level only.
func (a *Adapter) fail(tool, id string, start time.Time, e *server.Error) *mcp.CallToolResult {
	env := newErr(e, id, a.sets, a.scrub)
	attrs := []any{"mcpReqID", id, "tool", tool, "code", env.Code, "reason", env.Reason, "ms", since(start)}
	if e.Cause != nil {
		attrs = append(attrs, "cause", a.scrub.text(e.Cause.Error()))
	}
	a.log.Warn("tool call done", attrs...)
	if e.Cause != nil && a.log.Enabled(context.Background(), slog.LevelDebug) {
		a.log.Debug("tool call cause", "mcpReqID", id, "cause", e.Cause.Error())
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(errText(env))},
		StructuredContent: env,
		IsError:           true,
	}
}

func since(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}
