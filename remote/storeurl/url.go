// Package storeurl is the one parser of store URLs and the one package that
// knows every production backend, so that `remote` itself needs neither the
// file system store nor the AWS SDK:
//
//	"file:///abs/dir" | "s3://bucket/prefix"
//	  ─> Parse ─> Location{Dir} | Location{Bucket, Prefix}
//	  ─> Location.Open(cfg) ─> filestore.New(Dir) | s3store.New(cfg + Bucket, Prefix)
//
// The CLI's --store and the embedding API (Open) go through Parse, so a URL
// means the same everywhere. Every refusal wraps remote.ErrStoreURL and is
// an *Error whose text never repeats credentials, a query or a fragment.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// Location is a parsed store URL: Dir for a file store, Bucket (and
// Prefix, "" when the URL names none) for an S3 store.
type Location struct {
	Dir    string // absolute and clean
	Bucket string
	Prefix string // without leading or trailing "/"
}

// Error is a refused store URL. Shown is the URL with user info, query and
// fragment removed; Reason says what is wrong.
type Error struct {
	Shown  string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s: %s", remote.ErrStoreURL, e.Shown, e.Reason)
}

// Unwrap makes every *Error match remote.ErrStoreURL.
func (e *Error) Unwrap() error { return remote.ErrStoreURL }

// Parse parses a store URL:
//
//	file:///abs/dir          the directory store (file:///C:/dir on windows;
//	                         file://localhost/abs/dir too). The path is taken
//	                         literally, not percent-decoded, as the CLI has
//	                         always read it.
//	s3://bucket[/prefix]     the S3 store
//
// User info, a query or a fragment are refused (a query can carry a token).
func Parse(raw string) (Location, error) {
	refuse := func(reason string) (Location, error) {
		return Location{}, &Error{Shown: Redact(raw), Reason: reason}
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || (scheme != "file" && scheme != "s3") {
		return refuse("want file:///abs/dir or s3://bucket/prefix")
	}
	host, path, _ := strings.Cut(rest, "/")
	switch {
	case strings.Contains(host, "@"):
		return refuse("a store URL must not carry user info; use the AWS credential chain")
	case strings.ContainsAny(rest, "?#"):
		return refuse("a store URL must not carry a query or fragment")
	}
	if scheme == "s3" {
		if err := CheckBucket(host); err != nil {
			return refuse(err.Error())
		}
		prefix := strings.Trim(path, "/")
		if err := CheckPrefix(prefix); err != nil {
			return refuse(err.Error())
		}
		return Location{Bucket: host, Prefix: prefix}, nil
	}
	dir := rest
	if host == "localhost" {
		dir = "/" + path
	}
	if runtime.GOOS == "windows" && len(dir) > 2 && dir[0] == '/' && dir[2] == ':' {
		dir = dir[1:] // file:///C:/x
	}
	dir = filepath.FromSlash(dir)
	if !filepath.IsAbs(dir) {
		return refuse("a file store needs an absolute path, as in file:///home/me/store")
	}
	return Location{Dir: filepath.Clean(dir)}, nil
}

// Open opens the store loc names. For S3, loc's bucket and (when set)
// prefix override cfg's; the rest of cfg (region, endpoint, path style,
// credentials) applies.
func (loc Location) Open(ctx context.Context, cfg s3store.Config) (remote.Store, error) {
	if loc.Bucket == "" {
		return filestore.New(loc.Dir)
	}
	cfg.Bucket = loc.Bucket
	if loc.Prefix != "" {
		cfg.Prefix = loc.Prefix
	}
	return s3store.New(ctx, cfg)
}

// Open parses raw and opens the store it names (Location.Open).
func Open(ctx context.Context, raw string, cfg s3store.Config) (remote.Store, error) {
	loc, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return loc.Open(ctx, cfg)
}

// CheckBucket reports whether b is an S3 bucket name: 3 to 63 lowercase
// letters, digits, '-' and '.'.
func CheckBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return errors.New("a bucket name has 3 to 63 characters")
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return fmt.Errorf("bucket name %q: only lowercase letters, digits, '-' and '.'", b)
		}
	}
	return nil
}

// CheckPrefix reports whether p is a usable S3 key prefix: slash-separated
// key segments, no leading slash, no empty segment, no NUL or line break.
func CheckPrefix(p string) error {
	if strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsAny(p, "\x00\n\r") {
		return fmt.Errorf("prefix %q: want slash-separated key segments", p)
	}
	return nil
}

// Redact is s without user info, query or fragment, for echoing a store
// value that may not be one of ours.
func Redact(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "…"
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		host, path, _ := strings.Cut(rest, "/")
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = "…@" + host[i+1:]
		}
		s = scheme + "://" + host
		if path != "" {
			s += "/" + path
		}
	} else if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = "…@" + s[i+1:]
	}
	return s
}
