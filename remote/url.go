package remote

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrStoreURL is returned by OpenURL for a store URL it cannot use.
var ErrStoreURL = errors.New("remote: invalid store URL")

// OpenURL opens the store a URL names:
//
//	file:///abs/dir          the directory store (file:///C:/dir on windows)
//	s3://bucket[/prefix]     the S3 store; bucket and prefix from the URL
//	                         override cfg's, the rest of cfg (region,
//	                         endpoint, path style) applies
//
// URLs carrying credentials, a query or a fragment are refused; error
// messages never repeat credentials.
func OpenURL(ctx context.Context, raw string, cfg S3Config) (Store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStoreURL, redactParseError(err))
	}
	shown := u.Redacted()
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%w: %s: credentials in the URL are refused; use the environment or the AWS credential chain", ErrStoreURL, shown)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("%w: %s: a query or fragment is not allowed", ErrStoreURL, shown)
	}
	switch u.Scheme {
	case "file":
		dir, err := filePath(u)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrStoreURL, shown, err)
		}
		return NewFile(dir)
	case "s3":
		if u.Host == "" || u.Opaque != "" {
			return nil, fmt.Errorf("%w: %s: want s3://bucket/prefix", ErrStoreURL, shown)
		}
		cfg.Bucket = u.Host
		if p := strings.Trim(u.Path, "/"); p != "" {
			cfg.Prefix = p
		}
		return NewS3(ctx, cfg)
	default:
		return nil, fmt.Errorf("%w: %s: scheme must be file or s3", ErrStoreURL, shown)
	}
}

// filePath returns the absolute local path of a file URL.
func filePath(u *url.URL) (string, error) {
	if u.Opaque != "" {
		return "", errors.New("want file:///absolute/path")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("host %q: only local directories (file:///path)", u.Host)
	}
	p := u.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/dir
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return "", errors.New("the path must be absolute")
	}
	return filepath.Clean(p), nil
}

// redactParseError drops the URL url.Parse quotes in its error, which could
// hold a password.
func redactParseError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "unparsable"
}
