package s3store

// The AWS shared configuration files (~/.aws/config and ~/.aws/credentials),
// read the way the AWS CLI and SDKs read them, so that a profile that works
// for `aws s3 ls` works here. We parse them ourselves: the SDK's parser lives
// in its config package, whose dependencies (STS, SSO and their endpoint
// tables) cost every process of ours their package initialisation.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// awsProfile is one profile's properties, keys lower-cased. A sub-property
// (an indented line under "s3 =") is stored as "s3.key".
type awsProfile map[string]string

// awsFiles is what the two shared files say: profiles by name, and the
// [services NAME] sections that hold per-service endpoints.
type awsFiles struct {
	profiles map[string]awsProfile
	services map[string]awsProfile
}

// awsFilePaths returns the config and credentials files: the environment's
// choice, else the files under the home directory.
func awsFilePaths() (config, credentials string) {
	config, credentials = os.Getenv("AWS_CONFIG_FILE"), os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if config != "" && credentials != "" {
		return config, credentials
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return config, credentials // no home: only what the environment names
	}
	if config == "" {
		config = filepath.Join(home, ".aws", "config")
	}
	if credentials == "" {
		credentials = filepath.Join(home, ".aws", "credentials")
	}
	return config, credentials
}

// loadAWSFiles reads both files. A missing file is an empty one, as for the
// AWS CLI; an unreadable one is an error naming the file (never its content,
// which holds secrets). The credentials file is read second and wins on a
// property both set, as in the SDKs.
func loadAWSFiles(configPath, credentialsPath string) (awsFiles, error) {
	files := awsFiles{profiles: map[string]awsProfile{}, services: map[string]awsProfile{}}
	for _, f := range []struct {
		path   string
		config bool
	}{{configPath, true}, {credentialsPath, false}} {
		if f.path == "" {
			continue
		}
		data, err := os.ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return awsFiles{}, fmt.Errorf("read %s: %w", f.path, errors.Unwrap(err))
		}
		files.parse(data, f.config)
	}
	return files, nil
}

// parse adds one file's sections. In the config file a profile is
// "[profile NAME]" (or "[default]"), in the credentials file "[NAME]"; other
// section kinds than services (sso-session, ...) are ignored, as are lines
// that are neither a section nor a property.
func (files *awsFiles) parse(data []byte, config bool) {
	var cur awsProfile // nil: outside any section we keep
	var parent string  // the property an indented line belongs to
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if trimmed[0] == '[' {
			// A comment may follow the closing bracket.
			head, _, _ := strings.Cut(trimmed, "#")
			head, _, _ = strings.Cut(head, ";")
			head = strings.TrimSpace(head)
			parent, cur = "", nil
			if !strings.HasSuffix(head, "]") {
				continue
			}
			kind, name := sectionName(strings.TrimSpace(head[1 : len(head)-1]))
			var set map[string]awsProfile
			switch {
			case kind == "services" && config:
				set = files.services
			case kind == "profile" && config, kind == "" && name == "default", kind == "" && !config:
				set = files.profiles
			default:
				continue
			}
			if set[name] == nil {
				set[name] = awsProfile{}
			}
			cur = set[name]
			continue
		}
		if cur == nil {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			// A sub-property: inline comments are part of its value.
			if k, v, ok := splitProperty(trimmed); ok && parent != "" {
				cur[parent+"."+k] = v
			}
			continue
		}
		// A comment starts at " #" or " ;" (a '#' inside a value is kept).
		for _, c := range []string{" #", " ;", "\t#", "\t;"} {
			line, _, _ = strings.Cut(line, c)
		}
		k, v, ok := splitProperty(strings.TrimSpace(line))
		if !ok {
			continue
		}
		cur[k], parent = v, k
	}
}

// sectionName splits "profile dev" into its kind and name; "default" has no
// kind.
func sectionName(s string) (kind, name string) {
	kind, name, ok := strings.Cut(s, " ")
	if !ok {
		return "", s
	}
	return kind, strings.TrimSpace(name)
}

// splitProperty splits "key = value" (or the legacy "key: value"), lower-
// cases the key and removes quotes around the value.
func splitProperty(s string) (key, value string, ok bool) {
	sep := "="
	if eq, colon := strings.Index(s, "="), strings.Index(s, ":"); eq < 0 || colon >= 0 && colon < eq {
		sep = ":"
	}
	key, value, ok = strings.Cut(s, sep)
	if !ok {
		return "", "", false
	}
	key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	return key, value, key != ""
}
