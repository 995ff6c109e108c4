package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/author"
	"github.com/slivingdoc/slivingdoc/server/diag"
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

// Replier is an Engine that leaves work for after its replies
// (server.Engine.Replied): the adapter tells it each time a tool call's
// reply is written, or the call ended unanswered because its client
// cancelled it.
type Replier interface{ Replied() }

var _ Replier = (*server.Engine)(nil)

// Options configure the adapter.
type Options struct {
	Version string       // the release version advertised in initialize
	Logger  *slog.Logger // start and completion records; nil discards
	// Redact lists literal strings never to show in any result or log
	// record at info level (the private root, secret values).
	Redact []string
	// Scrubber is the process's scrubber (diag), when it has one; Redact
	// is added to it. Nil: a scrubber of Redact alone.
	Scrubber *diag.Scrubber
	// Author is what the process claims of who writes (--author,
	// SLIVINGDOC_AUTHOR, user and host); each commit adds the clientInfo
	// of the client it serves. The zero Claim: the client alone.
	Author author.Claim
}

// Adapter serves the two tools for one engine.
type Adapter struct {
	eng   Engine
	log   *slog.Logger
	sets  pathSets
	scrub *diag.Scrubber
	dir   string

	version      string
	instructions string
	tools        []tool // sorted by name, as tools/list sends them
	handlers     map[string]toolHandler
	author       author.Claim
}

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
		scrub: opts.Scrubber,
		dir:   dir,
	}
	if a.scrub == nil {
		a.scrub = diag.NewScrubber()
	}
	a.scrub.Add(opts.Redact...)
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = a.log.With("module", "mcp")
	a.version = opts.Version
	a.author = opts.Author
	a.author.Serve = true
	a.instructions = instructions(dir, a.sets)
	a.tools = tools(a.sets)
	a.handlers = map[string]toolHandler{}
	for i := range a.tools {
		a.tools[i].OutputSchema = outputSchema()
		a.handlers[a.tools[i].Name] = a.handler(a.tools[i].Name)
	}
	sort.Slice(a.tools, func(i, j int) bool { return a.tools[i].Name < a.tools[j].Name })
	return a, nil
}

// handler runs one tool. It returns a Go error only for a cancelled
// request, which the transport turns into a protocol error; everything
// else is a result the adapter built itself.
func (a *Adapter) handler(tool string) toolHandler {
	return func(ctx context.Context, rawArgs json.RawMessage) (res *callResult, err error) {
		id := diag.NewID()
		start := time.Now()
		a.log.Info("tool call", "mcpReqID", id, "tool", tool)
		defer func() {
			if p := recover(); p != nil {
				res, err = a.fail(tool, id, start, diag.Internal(fmt.Errorf("panic: %v", p))), nil
			}
		}()

		in, derr := decodeArgs(rawArgs, tool)
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
				// Not a domain error: the transport answers (or, for the
				// client's own cancellation, does not answer) it.
				cause := context.Cause(ctx)
				why := "cancelled"
				var cc clientCancel
				if errors.As(cause, &cc) {
					why = cc.reason
				} else if errors.Is(cause, errShutdown) {
					why = "the server is shutting down"
				}
				a.log.Info("tool call done", "mcpReqID", id, "tool", tool, "code", "CANCELLED",
					"reason", a.scrub.Text(why), "ms", since(start))
				if errors.Is(cause, errShutdown) {
					return nil, errShutdown
				}
				return nil, ctx.Err()
			}
			var de *diag.Error
			if !errors.As(err, &de) {
				de = diag.Internal(err)
			}
			return a.fail(tool, id, start, de), nil
		}
		ok := newOK(r, a.sets)
		a.log.Info("tool call done", "mcpReqID", id, "tool", tool, "code", ok.Code,
			"generation", ok.Generation, "files", ok.FilesChanged, "ms", since(start))
		return &callResult{
			Content:           textItem(okText(ok, a.sets)),
			StructuredContent: ok,
		}, nil
	}
}

// fail builds the error result and writes the completion record. The
// record's cause is scrubbed like the result; the raw cause, which may name
// keys or private paths, is kept for debug level only.
func (a *Adapter) fail(tool, id string, start time.Time, e *diag.Error) *callResult {
	env := newErr(e, id, a.sets, a.scrub)
	if tok := uncatalogued(env); tok != "" {
		// Never reached by the tokens the engine emits (every one is a
		// catalogue row); if one slips through, the caller still gets a
		// result its client accepts, and the log says what to add.
		a.log.Error("uncatalogued token in a domain error; add it to diag.Catalog", "mcpReqID", id, "token", tok)
		env = newErr(diag.Internal(e), id, a.sets, a.scrub)
	}
	attrs := []any{"mcpReqID", id, "tool", tool, "code", env.Code, "reason", env.Reason, "ms", since(start)}
	if e.Cause != nil {
		attrs = append(attrs, "cause", a.scrub.Text(e.Cause.Error()))
	}
	a.log.Warn("tool call done", attrs...)
	if e.Cause != nil && a.log.Enabled(context.Background(), slog.LevelDebug) {
		a.log.Debug("tool call cause", "mcpReqID", id, "cause", e.Cause.Error())
	}
	return &callResult{
		Content:           textItem(errText(env)),
		StructuredContent: env,
		IsError:           true,
	}
}

// authorText is the author a call for client claims: the process's
// claim with the client's clientInfo, cleaned (server/author).
func (a *Adapter) authorText(client implementation) string {
	claim := a.author
	claim.ClientName, claim.ClientVersion = client.Name, client.Version
	return claim.Text()
}

// textItem is a result's one text item.
func textItem(s string) []textContent { return []textContent{{Type: "text", Text: s}} }

func since(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}
