package main

// The shared store/engine settings of DESIGN §8, used by pull, commit,
// status, log, serve and verify.
//
// Every setting has a flag, an environment variable and a default; a flag
// given on the command line beats the environment, which beats the default
// (an empty environment variable counts as unset). addSettingsFlags only
// registers flags, so `-h` never touches anything; engineConfig resolves the
// values, validates them (a *usageError, exit 2), and opens the store.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
	"github.com/slivingdoc/slivingdoc/remote/storeurl"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// A setting is one row of the DESIGN §8 table.
type setting struct {
	flag, env, meta, usage string
	// The default shown by -h and used when unset: def's result, or fixed
	// when def is nil. A fixed default is a string, not a closure, so the
	// rows below are static data (no code runs for them before main).
	def   func() string
	fixed string
}

// defaultValue is the setting's default.
func (st *setting) defaultValue() string {
	if st.def != nil {
		return st.def()
	}
	return st.fixed
}

// The rows, in the order -h prints them.
var (
	setStore         = setting{"store", "SLIVINGDOC_STORE", "URL", "the notebook store: file:///abs/dir or s3://bucket/prefix", defaultStoreURL, ""}
	setBucket        = setting{"bucket", "SLIVINGDOC_BUCKET", "NAME", "S3 bucket; when set, the S3 backend is used with --prefix", nil, ""}
	setPrefix        = setting{"prefix", "SLIVINGDOC_PREFIX", "KEY", "key prefix of the notebook in the bucket (S3 only)", nil, "slivingdoc"}
	setRegion        = setting{"region", "AWS_REGION", "REGION", "S3 region", nil, "us-east-1"}
	setEndpoint      = setting{"endpoint", "AWS_ENDPOINT_URL_S3", "URL", "custom S3 endpoint (no user info); default: AWS resolution", nil, ""}
	setPathStyle     = setting{"path-style", "SLIVINGDOC_PATH_STYLE", "", "use path-style S3 addressing", nil, "false"}
	setWorkspaceRoot = setting{"workspace-root", "SLIVINGDOC_WORKSPACE_ROOT", "DIR", "paths must resolve at or below DIR; default: pull/commit/status use the notebook directory itself, serve a session directory", nil, ""}
	setPrivateRoot   = setting{"private-root", "SLIVINGDOC_PRIVATE_ROOT", "DIR", "private state (records and object cache), never inside the workspace; default in the user state directory", defaultPrivateRoot, ""}
	setWritable      = setting{"writable", "SLIVINGDOC_WRITABLE", "PATH", "notebook-relative path commits may change (repeatable; env: ':'-separated)", nil, ""}
	setReadOnly      = setting{"read-only", "SLIVINGDOC_READ_ONLY", "PATH", "notebook-relative path commits may not change (repeatable; env: ':'-separated)", nil, ""}
	setRetries       = setting{"commit-retries", "SLIVINGDOC_COMMIT_RETRIES", "N", "no longer used: a commit waits until its change is accepted, with no retries to count (0..100 still accepted)", nil, "8"}
	setCheckpoint    = setting{"checkpoint-packs", "SLIVINGDOC_CHECKPOINT_PACKS", "N", "increments before a checkpoint is built (min 1)", nil, "1024"}
	setRetained      = setting{"retained-checkpoints", "SLIVINGDOC_RETAINED_CHECKPOINTS", "N", "no longer used: a format-4 store keeps one older checkpoint (0..64 still accepted)", nil, "1"}
	setRetain        = setting{"retain", "SLIVINGDOC_RETAIN", "DURATION", "history kept by time, e.g. 720h (Go duration, at least 1m; 0: none, history goes with its checkpoints)", nil, "720h"}
	setIgnore        = setting{"ignore", "SLIVINGDOC_IGNORE", "PATTERN", "leave paths matching PATTERN out of the notebook (repeatable; env: ','-separated; see docs/ignore.md)", nil, ""}
	setNoDefIgnores  = setting{"no-default-ignores", "SLIVINGDOC_NO_DEFAULT_IGNORES", "", "do not leave out the built-in OS and editor droppings (.DS_Store, *.swp, *~, ...)", nil, "false"}
	setSecrets       = setting{"secrets", "SLIVINGDOC_SECRETS", "MODE", "refuse: refuse commits adding a recognised credential; allow: publish them", nil, "refuse"}
)

var allSettings = []*setting{&setStore, &setBucket, &setPrefix, &setRegion, &setEndpoint, &setPathStyle,
	&setWorkspaceRoot, &setPrivateRoot, &setWritable, &setReadOnly, &setRetries, &setCheckpoint, &setRetained, &setRetain,
	&setIgnore, &setNoDefIgnores, &setSecrets}

// Retired settings: they chose among the publication modes of binaries
// before format version 4 (local turns, turn offers, group commit), which
// are gone, every commit taking one path. Scripts and MCP host
// configurations still pass them, so they stay accepted (a flag's value
// must still be a boolean, as before) and do nothing but warn, once per
// command, on stderr (retiredWarnings). No help page lists them.
var (
	setLocalTurns  = setting{"local-turns", "SLIVINGDOC_LOCAL_TURNS", "", "no longer used", nil, ""}
	setTurnOffers  = setting{"turn-offers", "SLIVINGDOC_TURN_OFFERS", "", "no longer used", nil, ""}
	setGroupCommit = setting{"group-commit", "SLIVINGDOC_GROUP_COMMIT", "", "no longer used", nil, ""}
)

var retiredSettings = []*setting{&setLocalTurns, &setTurnOffers, &setGroupCommit}

// retiredWarnings writes one line to w for each retired setting given
// (flag or environment): what it was is no longer there to choose.
func (s *settings) retiredWarnings(w io.Writer) {
	for _, st := range retiredSettings {
		if _, src := s.lookup(st); src != fromDefault {
			fmt.Fprintf(w, "slivingdoc: warning: %s is no longer used and is ignored: every commit now publishes by one path, with no modes to choose\n", st.name(src))
		}
	}
}

// settings holds the values of the shared flags of one command invocation.
type settings struct {
	fs     *flag.FlagSet
	getenv func(string) string
	values map[*setting]*string
	lists  map[*setting]*listFlag
	// Logger, when set before engineConfig, becomes Config.Logger; otherwise
	// a logger on stderr is made.
	Logger *slog.Logger
	// Dir, when set before engineConfig, is the directory the command
	// works on (or, for log, show and diff, the working directory): with
	// no store setting given, the store that directory remembers is used
	// (store.go).
	Dir string
}

// listFlag is a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, string(listSeparator)) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// listSeparator splits SLIVINGDOC_WRITABLE and SLIVINGDOC_READ_ONLY. ':' can
// never occur in a notebook path (DESIGN §6), so the split is unambiguous on
// every platform.
const listSeparator = ':'

// addSettingsFlags registers every DESIGN §8 flag on fs.
func addSettingsFlags(fs *flag.FlagSet) *settings {
	s := &settings{fs: fs, getenv: os.Getenv, values: map[*setting]*string{}, lists: map[*setting]*listFlag{}}
	for _, st := range append(allSettings[:len(allSettings):len(allSettings)], retiredSettings...) {
		switch st {
		case &setWritable, &setReadOnly, &setIgnore:
			l := &listFlag{}
			s.lists[st] = l
			fs.Var(l, st.flag, st.usage)
		case &setPathStyle, &setNoDefIgnores,
			&setLocalTurns, &setTurnOffers, &setGroupCommit:
			v := new(string)
			s.values[st] = v
			fs.Var(boolString{v}, st.flag, st.usage)
		default:
			s.values[st] = fs.String(st.flag, "", st.usage)
		}
	}
	return s
}

// boolString is a boolean flag (-path-style, -path-style=false) that keeps
// its raw text so "given on the command line" can be told from "default".
type boolString struct{ v *string }

func (b boolString) String() string {
	if b.v == nil {
		return ""
	}
	return *b.v
}
func (b boolString) Set(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return errors.New("want true or false")
	}
	*b.v = v
	return nil
}
func (b boolString) IsBoolFlag() bool { return true }

// usageError is a bad flag or environment value: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// source tells where a resolved value came from.
type source int

const (
	fromDefault source = iota
	fromEnv
	fromFlag
)

// name is how an error message refers to the value's origin.
func (st *setting) name(src source) string {
	if src == fromEnv {
		return st.env
	}
	return "--" + st.flag
}

// lookup resolves one scalar setting: flag > environment > default.
func (s *settings) lookup(st *setting) (string, source) {
	given := false
	s.fs.Visit(func(f *flag.Flag) {
		if f.Name == st.flag {
			given = true
		}
	})
	if given {
		return *s.values[st], fromFlag
	}
	if v := s.getenv(st.env); v != "" {
		return v, fromEnv
	}
	return st.defaultValue(), fromDefault
}

// lookupList resolves a repeatable setting: the flags, else the environment list.
func (s *settings) lookupList(st *setting) []string {
	return s.lookupListSep(st, listSeparator)
}

// lookupListSep is lookupList with the environment split at sep.
func (s *settings) lookupListSep(st *setting, sep rune) []string {
	if l := *s.lists[st]; len(l) > 0 {
		return l
	}
	var out []string
	for _, v := range strings.Split(s.getenv(st.env), string(sep)) {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (s *settings) lookupInt(st *setting, lo, hi int) (int, error) {
	v, src := s.lookup(st)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		if hi == maxInt {
			return 0, usageErrorf("%s: %q is not a whole number of at least %d", st.name(src), v, lo)
		}
		return 0, usageErrorf("%s: %q is not a whole number from %d to %d", st.name(src), v, lo, hi)
	}
	return n, nil
}

const maxInt = int(^uint(0) >> 1)

// storeSpec is the resolved store selection.
type storeSpec struct {
	fileDir string         // the file store's directory, when not S3
	s3      s3store.Config // when Bucket != ""
}

// resolveStore applies the selection rules: --bucket (flag or env) implies
// S3 with --prefix; --store names file:// or s3://; a flag beats the
// environment, and --store and --bucket at the same level contradict.
func (s *settings) resolveStore() (storeSpec, error) {
	store, storeSrc := s.lookup(&setStore)
	bucket, bucketSrc := s.lookup(&setBucket)
	prefix, prefixSrc := s.lookup(&setPrefix)
	region, _ := s.lookup(&setRegion)
	endpoint, endpointSrc := s.lookup(&setEndpoint)
	ps, psSrc := s.lookup(&setPathStyle)
	pathStyle, err := strconv.ParseBool(ps)
	if err != nil {
		return storeSpec{}, usageErrorf("%s: %q is not true or false", setPathStyle.name(psSrc), ps)
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			return storeSpec{}, usageErrorf("%s: want an http:// or https:// URL", setEndpoint.name(endpointSrc))
		case u.User != nil:
			// Credentials come from the AWS chain only; a URL with them would
			// leak into logs and process listings.
			return storeSpec{}, usageErrorf("%s: an endpoint URL must not carry user info; use the AWS credential chain", setEndpoint.name(endpointSrc))
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(endpoint, "?#"):
			// A query can carry a token (X-Amz-Security-Token=…): refused
			// without echoing the URL.
			return storeSpec{}, usageErrorf("%s: an endpoint URL must not carry a query or fragment", setEndpoint.name(endpointSrc))
		}
	}
	s3 := s3store.Config{Bucket: bucket, Prefix: prefix, Region: region, Endpoint: endpoint, PathStyle: pathStyle}

	useBucket := bucket != "" && (storeSrc == fromDefault || bucketSrc > storeSrc)
	if bucket != "" && storeSrc == bucketSrc {
		return storeSpec{}, usageErrorf("%s and %s both select a store; give one", setStore.name(storeSrc), setBucket.name(bucketSrc))
	}
	if useBucket {
		if err := storeurl.CheckBucket(bucket); err != nil {
			return storeSpec{}, usageErrorf("%s: %v", setBucket.name(bucketSrc), err)
		}
		if err := storeurl.CheckPrefix(prefix); err != nil {
			return storeSpec{}, usageErrorf("%s: %v", setPrefix.name(prefixSrc), err)
		}
		return storeSpec{s3: s3}, nil
	}
	loc, err := storeurl.Parse(store)
	if err != nil {
		var ue *storeurl.Error
		if errors.As(err, &ue) {
			return storeSpec{}, usageErrorf("%s: %q: %s", setStore.name(storeSrc), ue.Shown, ue.Reason)
		}
		return storeSpec{}, usageErrorf("%s: %v", setStore.name(storeSrc), err)
	}
	if loc.Bucket == "" {
		return storeSpec{fileDir: loc.Dir}, nil
	}
	s3.Bucket = loc.Bucket
	if p := loc.Prefix; p != "" {
		if prefixSrc != fromDefault && prefix != p {
			return storeSpec{}, usageErrorf("%s names prefix %q but %s says %q; give one", setStore.name(storeSrc), p, setPrefix.name(prefixSrc), prefix)
		}
		s3.Prefix = p
	}
	if err := storeurl.CheckPrefix(s3.Prefix); err != nil {
		return storeSpec{}, usageErrorf("%s: %v", setStore.name(storeSrc), err)
	}
	return storeSpec{s3: s3}, nil
}

// open opens the store the spec names, through the one store-URL package.
func (sp storeSpec) open(ctx context.Context) (remote.Store, error) {
	return storeurl.Location{Dir: sp.fileDir, Bucket: sp.s3.Bucket, Prefix: sp.s3.Prefix}.Open(ctx, sp.s3)
}

// engineConfig resolves flags > environment > defaults, opens the store
// and returns the engine configuration. Call it after fs.Parse.
//
// WorkspaceRoot and DefaultDir stay empty unless --workspace-root is given:
// each command applies its own default. Bad values are *usageError.
func (s *settings) engineConfig(ctx context.Context) (server.Config, error) {
	var cfg server.Config
	spec, err := s.resolveStore()
	if err != nil {
		return cfg, err
	}
	priv, privSrc := s.lookup(&setPrivateRoot)
	if priv == "" {
		return cfg, usageErrorf("no private root: set %s or %s (the user cache directory is unknown)", setPrivateRoot.name(fromFlag), setPrivateRoot.env)
	}
	if cfg.PrivateRoot, err = absDir(priv); err != nil {
		return cfg, usageErrorf("%s: %v", setPrivateRoot.name(privSrc), err)
	}
	spec = s.rememberedStore(spec, cfg.PrivateRoot)
	cfg.StoreLocator = spec.locator()
	// --commit-retries counted version 3's lost-race retries. A version-4
	// commit has none (a lost write re-reads `current` and folds again
	// until the change is accepted or declined), so the value is checked
	// as before, for the scripts that pass it, and otherwise ignored.
	if _, err = s.lookupInt(&setRetries, 0, 100); err != nil {
		return cfg, err
	}
	if cfg.CheckpointPacks, err = s.lookupInt(&setCheckpoint, 1, maxInt); err != nil {
		return cfg, err
	}
	// --retained-checkpoints chose how many replaced chains version 3's
	// checkpoint kept. Every writer's fold must compute the same `current`,
	// so a version-4 fold keeps exactly one older checkpoint whatever a
	// process is told (remote.RetainedV4); the value is checked as before
	// and otherwise ignored.
	if cfg.RetainedCheckpoints, err = s.lookupInt(&setRetained, 0, 64); err != nil {
		return cfg, err
	}
	{
		v, src := s.lookup(&setRetain)
		d, derr := time.ParseDuration(strings.TrimSpace(v))
		if strings.TrimSpace(v) == "0" {
			d, derr = 0, nil
		}
		if derr != nil || (d != 0 && d < time.Minute) {
			return cfg, usageErrorf("%s: %q is not 0 or a duration of at least 1m (e.g. 720h)", setRetain.name(src), v)
		}
		cfg.Retain = d
		if d == 0 {
			cfg.Retain = server.NoRetainWindow
		}
	}
	s.retiredWarnings(s.fs.Output())
	cfg.Writable = s.lookupList(&setWritable)
	cfg.ReadOnly = s.lookupList(&setReadOnly)
	if err := s.contentRules(&cfg); err != nil {
		return cfg, err
	}

	if root, src := s.lookup(&setWorkspaceRoot); root != "" {
		if cfg.WorkspaceRoot, err = absDir(root); err != nil {
			return cfg, usageErrorf("%s: %v", setWorkspaceRoot.name(src), err)
		}
	}
	redactPath(cfg.PrivateRoot)

	cfg.Logger = s.Logger
	if cfg.Logger == nil {
		cfg.Logger = newLogger(os.Stderr)
	}
	if spec.s3.Bucket == "" && spec.fileDir == "" {
		return cfg, usageErrorf("no store: set --store or %s (the user data directory is unknown)", setStore.env)
	}
	if cfg.Store, err = spec.open(ctx); err != nil {
		return cfg, fmt.Errorf("opening the store: %w", err)
	}
	return cfg, nil
}

// absDir expands a leading ~/ and makes p absolute and clean.
func absDir(p string) (string, error) {
	expanded, err := rules.ExpandHome(p)
	if err != nil {
		return "", fmt.Errorf("%q: home directory unknown: %w", p, err)
	}
	p = expanded
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return a, nil
}

// defaultStoreURL is file://<user data dir>/slivingdoc/store, or "" when
// the data directory is unknown.
func defaultStoreURL() string {
	d, err := userDataDir()
	if err != nil {
		return ""
	}
	d = filepath.ToSlash(filepath.Join(d, "slivingdoc", "store"))
	if !strings.HasPrefix(d, "/") {
		d = "/" + d // windows: file:///C:/...
	}
	return "file://" + d
}

// userDataDir is the per-user directory for application data: Go's
// standard library has cache and config but no data directory.
func userDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support"), nil
	case "plan9":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "lib"), nil
	default:
		// XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
		if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
			return d, nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".local", "share"), nil
	}
}

// printSettingsUsage writes the settings reference: flag, environment
// variable and default of each row. It reads only the environment.
func printSettingsUsage(w io.Writer) {
	fmt.Fprintf(w, "\nStore and engine settings (flag > environment > default):\n")
	for _, st := range allSettings {
		name := "--" + st.flag
		if st.meta != "" {
			name += " " + st.meta
		}
		fmt.Fprintf(w, "  %s\n      %s\n      env %s", name, st.usage, st.env)
		if d := st.defaultValue(); d != "" {
			fmt.Fprintf(w, "; default %s", d)
		}
		fmt.Fprintln(w)
	}
}

// ignoreSeparator splits SLIVINGDOC_IGNORE (as the issue and DESIGN §8
// fix it); a pattern holding a comma is given with --ignore instead.
const ignoreSeparator = ','

// contentRules resolves what the notebook leaves out: --ignore,
// --no-default-ignores and --secrets (DESIGN §6).
func (s *settings) contentRules(cfg *server.Config) error {
	cfg.Ignore = s.lookupListSep(&setIgnore, ignoreSeparator)
	nd, ndSrc := s.lookup(&setNoDefIgnores)
	noDefaults, err := strconv.ParseBool(nd)
	if err != nil {
		return usageErrorf("%s: %q is not true or false", setNoDefIgnores.name(ndSrc), nd)
	}
	cfg.NoDefaultIgnores = noDefaults
	switch mode, src := s.lookup(&setSecrets); mode {
	case "refuse":
	case "allow":
		cfg.AllowSecrets = true
	default:
		return usageErrorf("%s: %q: want refuse or allow", setSecrets.name(src), mode)
	}
	return nil
}
