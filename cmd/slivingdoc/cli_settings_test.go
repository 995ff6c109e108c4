package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// parsedSettings parses args against a fresh flag set with env as the
// environment.
func parsedSettings(t *testing.T, env map[string]string, args ...string) *settings {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := addSettingsFlags(fs)
	s.getenv = func(k string) string { return env[k] }
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return s
}

// Flags beat the environment, which beats the default, for every kind of
// setting.
func TestSettingsPrecedence(t *testing.T) {
	env := map[string]string{
		"SLIVINGDOC_COMMIT_RETRIES": "5", "SLIVINGDOC_WRITABLE": "x:y/z", "SLIVINGDOC_PATH_STYLE": "true",
		"AWS_REGION": "eu-west-1",
	}
	s := parsedSettings(t, nil)
	if v, src := s.lookup(&setRetries); v != "8" || src != fromDefault {
		t.Errorf("default retries = %q from %v", v, src)
	}
	s = parsedSettings(t, env)
	if n, err := s.lookupInt(&setRetries, 0, 100); n != 5 || err != nil {
		t.Errorf("env retries = %d, %v", n, err)
	}
	if l := s.lookupList(&setWritable); !reflect.DeepEqual(l, []string{"x", "y/z"}) {
		t.Errorf("env writable = %q", l)
	}
	if v, _ := s.lookup(&setPathStyle); v != "true" {
		t.Errorf("env path style = %q", v)
	}
	s = parsedSettings(t, env, "--commit-retries", "0", "--writable", "a", "--writable", "b c", "--path-style=false", "--region", "us-west-2", "--bucket", "abc")
	if n, err := s.lookupInt(&setRetries, 0, 100); n != 0 || err != nil {
		t.Errorf("flag retries = %d, %v", n, err)
	}
	if l := s.lookupList(&setWritable); !reflect.DeepEqual(l, []string{"a", "b c"}) {
		t.Errorf("flag writable = %q", l)
	}
	spec, err := s.resolveStore()
	if err != nil || spec.s3.PathStyle || spec.s3.Region != "us-west-2" {
		t.Errorf("flags over env: %+v, %v", spec, err)
	}
}

// Store selection: the file default under the user data dir, s3:// URLs,
// and --bucket implying S3 with --prefix.
func TestSettingsStoreSelection(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want storeSpec
	}{
		{"default", nil, nil, storeSpec{fileDir: filepath.Join(data, "slivingdoc", "store")}},
		{"file URL", nil, []string{"--store", "file:///srv/notes/"}, storeSpec{fileDir: "/srv/notes"}},
		{"s3 URL", nil, []string{"--store", "s3://my-bucket/team/notes/"}, storeSpec{s3: s3store.Config{Bucket: "my-bucket", Prefix: "team/notes", Region: "us-east-1"}}},
		{"s3 URL without prefix", map[string]string{"SLIVINGDOC_PREFIX": "p"}, []string{"--store", "s3://my-bucket"}, storeSpec{s3: s3store.Config{Bucket: "my-bucket", Prefix: "p", Region: "us-east-1"}}},
		{"bucket flag", nil, []string{"--bucket", "b-1", "--endpoint", "http://127.0.0.1:9000", "--path-style"}, storeSpec{s3: s3store.Config{Bucket: "b-1", Prefix: "slivingdoc", Region: "us-east-1", Endpoint: "http://127.0.0.1:9000", PathStyle: true}}},
		{"bucket env", map[string]string{"SLIVINGDOC_BUCKET": "b-2", "SLIVINGDOC_STORE": "file:///ignored"}, nil, storeSpec{}}, // same level: refused below
		{"store flag beats bucket env", map[string]string{"SLIVINGDOC_BUCKET": "b-2"}, []string{"--store", "file:///x"}, storeSpec{fileDir: "/x"}},
		{"bucket flag beats store env", map[string]string{"SLIVINGDOC_STORE": "file:///x"}, []string{"--bucket", "b-3"}, storeSpec{s3: s3store.Config{Bucket: "b-3", Prefix: "slivingdoc", Region: "us-east-1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsedSettings(t, tc.env, tc.args...).resolveStore()
			if tc.name == "bucket env" {
				var ue *usageError
				if !errors.As(err, &ue) {
					t.Fatalf("SLIVINGDOC_STORE and SLIVINGDOC_BUCKET together: %v", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// Bad values are usage errors that name the flag or the variable they
// came from.
func TestSettingsBadValues(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		args  []string
		names string // the flag or variable the error must name
	}{
		{"retries too high", nil, []string{"--commit-retries", "101"}, "--commit-retries"},
		{"retries not a number", map[string]string{"SLIVINGDOC_COMMIT_RETRIES": "many"}, nil, "SLIVINGDOC_COMMIT_RETRIES"},
		{"checkpoint zero", nil, []string{"--checkpoint-packs", "0"}, "--checkpoint-packs"},
		{"retained too high", map[string]string{"SLIVINGDOC_RETAINED_CHECKPOINTS": "65"}, nil, "SLIVINGDOC_RETAINED_CHECKPOINTS"},
		{"unknown scheme", nil, []string{"--store", "ftp://x"}, "--store"},
		{"relative file store", map[string]string{"SLIVINGDOC_STORE": "file://rel/dir"}, nil, "SLIVINGDOC_STORE"},
		{"bad bucket", nil, []string{"--bucket", "No_Such"}, "--bucket"},
		{"bad bucket in URL", nil, []string{"--store", "s3:///prefix"}, "--store"},
		{"store and bucket flags", nil, []string{"--store", "file:///x", "--bucket", "abc"}, "--bucket"},
		{"prefix disagrees with URL", nil, []string{"--store", "s3://abc/p", "--prefix", "q"}, "--prefix"},
		{"endpoint with user info", map[string]string{"AWS_ENDPOINT_URL_S3": "https://AKIAIOSFODNN7EXAMPLE:secret@s3.example"}, []string{"--bucket", "abc"}, "AWS_ENDPOINT_URL_S3"},
		{"endpoint not a URL", nil, []string{"--bucket", "abc", "--endpoint", "localhost:9000"}, "--endpoint"},
		{"path style", map[string]string{"SLIVINGDOC_PATH_STYLE": "maybe"}, nil, "SLIVINGDOC_PATH_STYLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsedSettings(t, tc.env, tc.args...).engineConfig(t.Context())
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("want a usage error, got %v", err)
			}
			if !strings.Contains(ue.msg, tc.names) {
				t.Errorf("%q does not name %s", ue.msg, tc.names)
			}
			if strings.Contains(ue.msg, "secret") {
				t.Errorf("the error shows the credential: %q", ue.msg)
			}
		})
	}
}

// The resolved configuration carries every setting; the file store is
// opened where the URL says and paths become absolute.
func TestSettingsEngineConfig(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"SLIVINGDOC_PRIVATE_ROOT": filepath.Join(dir, "p"), "SLIVINGDOC_READ_ONLY": "docs:faq.md"}
	s := parsedSettings(t, env, "--store", "file://"+filepath.ToSlash(filepath.Join(dir, "store")), "--checkpoint-packs", "3",
		"--retained-checkpoints", "0", "--workspace-root", dir)
	cfg, err := s.engineConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store == nil || cfg.Logger == nil || cfg.PrivateRoot != filepath.Join(dir, "p") || cfg.WorkspaceRoot != dir ||
		cfg.CheckpointPacks != 3 || cfg.RetainedCheckpoints != 0 ||
		!reflect.DeepEqual(cfg.ReadOnly, []string{"docs", "faq.md"}) || cfg.Writable != nil || cfg.DefaultDir != "" {
		t.Fatalf("config %+v", cfg)
	}
}

// The retired mode settings (--local-turns, --turn-offers,
// --group-commit and their variables) are accepted (a flag with a
// boolean, a variable with any value), do nothing, and warn once each on
// the command's stderr, naming the flag or the variable given; a command
// that gives none prints nothing.
func TestSettingsRetiredModesWarn(t *testing.T) {
	dir := t.TempDir()
	with := func(kv ...string) map[string]string {
		env := map[string]string{"SLIVINGDOC_PRIVATE_ROOT": filepath.Join(dir, "p"), "SLIVINGDOC_STORE": "file://" + filepath.ToSlash(filepath.Join(dir, "store"))}
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	plain, err := parsedSettings(t, with()).engineConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string // the names the warnings give, in order
	}{
		{"none", with(), nil, nil},
		{"flags", with(), []string{"--local-turns=false", "--turn-offers", "--group-commit=true"}, []string{"--local-turns", "--turn-offers", "--group-commit"}},
		{"environment", with("SLIVINGDOC_LOCAL_TURNS", "true", "SLIVINGDOC_GROUP_COMMIT", "sometimes"), nil, []string{"SLIVINGDOC_LOCAL_TURNS", "SLIVINGDOC_GROUP_COMMIT"}},
		{"flag beats environment", with("SLIVINGDOC_TURN_OFFERS", "0"), []string{"--turn-offers=false"}, []string{"--turn-offers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := parsedSettings(t, tc.env, tc.args...)
			var stderr bytes.Buffer
			s.fs.SetOutput(&stderr)
			cfg, err := s.engineConfig(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Store, cfg.Logger = plain.Store, plain.Logger
			if !reflect.DeepEqual(cfg, plain) {
				t.Errorf("the configuration changed:\n%+v\nwant\n%+v", cfg, plain)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(tc.want) == 0 {
				lines = nil
				if stderr.Len() != 0 {
					t.Fatalf("stderr %q, want nothing", stderr.String())
				}
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("stderr %q: want one line for each of %v", stderr.String(), tc.want)
			}
			for i, name := range tc.want {
				if !strings.HasPrefix(lines[i], "slivingdoc: warning: "+name+" is no longer used") {
					t.Errorf("line %q, want a warning naming %s", lines[i], name)
				}
			}
		})
	}
}
