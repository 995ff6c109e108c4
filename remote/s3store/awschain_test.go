package s3store_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// awsEnv empties every variable the AWS configuration reads (a developer's
// own AWS setup must not leak into the tests) and points the shared files at
// config and credentials, written into a temporary directory. STS is a
// closed port on the loopback unless a test sets its own: a test that goes
// wrong must not reach AWS.
func awsEnv(t *testing.T, config, credentials string) {
	t.Helper()
	withoutCredentials(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1")
	for _, k := range []string{"AWS_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_SESSION_NAME",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_CA_BUNDLE", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_EC2_METADATA_SERVICE_ENDPOINT"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{"config": config, "credentials": credentials} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv(map[string]string{"config": "AWS_CONFIG_FILE", "credentials": "AWS_SHARED_CREDENTIALS_FILE"}[name], p)
	}
}

// signature is what an S3 request was signed with.
type signature struct {
	key, region, token string
}

// signatureRecorder is the S3 side: it records the signature of each
// request and answers 404, which Head reports as ErrNotFound.
type signatureRecorder struct {
	mu   sync.Mutex
	seen []signature
}

var credentialScope = regexp.MustCompile(`Credential=([^/]+)/\d{8}/([^/]+)/s3/aws4_request`)

func (r *signatureRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	m := credentialScope.FindStringSubmatch(req.Header.Get("Authorization"))
	if m == nil {
		return nil, fmt.Errorf("unsigned request: %q", req.Header.Get("Authorization"))
	}
	r.mu.Lock()
	r.seen = append(r.seen, signature{m[1], m[2], req.Header.Get("X-Amz-Security-Token")})
	r.mu.Unlock()
	return &http.Response{StatusCode: 404, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// signedWith opens the store with cfg under the current environment, makes
// one request and returns its signature, or the error when nothing was sent.
func signedWith(t *testing.T, cfg s3store.Config) (signature, error) {
	t.Helper()
	rec := &signatureRecorder{}
	cfg.Bucket, cfg.Endpoint, cfg.PathStyle, cfg.Transport = "notes", "http://127.0.0.1:1", true, rec
	s := openS3(t, cfg)
	_, err := s.Head(context.Background(), "current")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) == 0 {
		return signature{}, err
	}
	if !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("Head after a signed request: %v, want ErrNotFound", err)
	}
	return rec.seen[0], nil
}

func wantSigned(t *testing.T, cfg s3store.Config, key, token string) {
	t.Helper()
	got, err := signedWith(t, cfg)
	if err != nil {
		t.Fatalf("nothing was sent: %v", err)
	}
	if got.key != key || got.token != token {
		t.Fatalf("signed with key %q token %q, want %q %q", got.key, got.token, key, token)
	}
}

// wantRefused checks that no request was sent and that the error is
// ErrNoCredentials carrying every phrase in says.
func wantRefused(t *testing.T, cfg s3store.Config, says ...string) {
	t.Helper()
	got, err := signedWith(t, cfg)
	if err == nil {
		t.Fatalf("a request was signed with %+v", got)
	}
	if !errors.Is(err, remote.ErrNoCredentials) {
		t.Fatalf("%v is not ErrNoCredentials", err)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("the error does not say %q: %v", s, err)
		}
	}
}

// Each source of the chain, alone and against the ones it must win over, in
// the order the AWS CLI and SDKs use.
func TestAWSCredentialChainOrder(t *testing.T) {
	const files = "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s\n\n[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = s\naws_session_token = devtoken\n"
	t.Run("explicit keys beat the environment", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
		wantSigned(t, s3store.Config{AccessKeyID: "AKIDEXPLICIT", SecretAccessKey: "s"}, "AKIDEXPLICIT", "")
	})
	t.Run("environment keys beat the default profile", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
		t.Setenv("AWS_SESSION_TOKEN", "envtoken")
		wantSigned(t, s3store.Config{}, "AKIDENV", "envtoken")
	})
	t.Run("an id without a secret is no keys", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
		wantSigned(t, s3store.Config{}, "AKIDDEFAULT", "")
	})
	t.Run("AWS_PROFILE beats environment keys", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
		t.Setenv("AWS_PROFILE", "dev")
		wantSigned(t, s3store.Config{}, "AKIDDEV", "devtoken")
	})
	t.Run("AWS_DEFAULT_PROFILE", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_DEFAULT_PROFILE", "dev")
		wantSigned(t, s3store.Config{}, "AKIDDEV", "devtoken")
	})
	t.Run("the credentials file wins over the config file", func(t *testing.T) {
		awsEnv(t, "[profile dev]\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = s\n[profile other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = s\n", files)
		t.Setenv("AWS_PROFILE", "dev")
		wantSigned(t, s3store.Config{}, "AKIDDEV", "devtoken")
		t.Setenv("AWS_PROFILE", "other")
		wantSigned(t, s3store.Config{}, "AKIDOTHER", "")
	})
	t.Run("a profile missing from both files", func(t *testing.T) {
		awsEnv(t, "", files)
		t.Setenv("AWS_PROFILE", "nosuch")
		wantRefused(t, s3store.Config{}, `profile "nosuch"`)
	})
	t.Run("credential_process", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "creds.json")
		if err := os.WriteFile(out, []byte(`{"Version": 1, "AccessKeyId": "AKIDPROCESS", "SecretAccessKey": "s", "SessionToken": "proctoken"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		awsEnv(t, "[profile proc]\ncredential_process = cat "+out+"\n", "")
		t.Setenv("AWS_PROFILE", "proc")
		wantSigned(t, s3store.Config{}, "AKIDPROCESS", "proctoken")
	})
	t.Run("nothing anywhere", func(t *testing.T) {
		awsEnv(t, "", "")
		wantRefused(t, s3store.Config{}, "AWS_EC2_METADATA_DISABLED")
	})
}

// The shared files are read as the AWS CLI reads them: comments, quotes,
// the legacy colon, case-insensitive keys, nested service sections.
func TestAWSSharedFileSyntax(t *testing.T) {
	awsEnv(t, `# a comment
[profile dev] ; after the section
region = eu-west-3 # after a value
services = local
endpoint_url = http://127.0.0.1:7000
[services local]
s3 =
  endpoint_url = http://127.0.0.1:9000
`, `; comment
[dev]
AWS_ACCESS_KEY_ID: "AKIDQUOTED"
aws_secret_access_key = 's#cret'
`)
	t.Setenv("AWS_PROFILE", "dev")
	got, err := signedWith(t, s3store.Config{})
	if err != nil || got.key != "AKIDQUOTED" || got.region != "eu-west-3" {
		t.Fatalf("signed %+v (%v), want key AKIDQUOTED in eu-west-3", got, err)
	}
	// The services section names the S3 endpoint; it beats the profile's
	// endpoint_url and names the store.
	s, err := s3store.New(context.Background(), s3store.Config{Bucket: "notes"})
	if err != nil || !strings.Contains(s.Identity(), url.QueryEscape("http://127.0.0.1:9000")) {
		t.Fatalf("identity %v (%v) does not name the services section's endpoint", s, err)
	}
	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
	if s, err = s3store.New(context.Background(), s3store.Config{Bucket: "notes"}); err != nil || strings.Contains(s.Identity(), "endpoint") {
		t.Fatalf("identity %v (%v) names an endpoint the configuration says to ignore", s, err)
	}
}

// Region: the store's, AWS_REGION, AWS_DEFAULT_REGION, the profile's, then
// us-east-1.
func TestAWSRegionOrder(t *testing.T) {
	awsEnv(t, "[default]\nregion = ap-south-1\n", "[default]\naws_access_key_id = AKID\naws_secret_access_key = s\n")
	region := func(cfg s3store.Config) string {
		t.Helper()
		got, err := signedWith(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return got.region
	}
	if r := region(s3store.Config{}); r != "ap-south-1" {
		t.Fatalf("region %q, want the profile's", r)
	}
	t.Setenv("AWS_DEFAULT_REGION", "eu-north-1")
	if r := region(s3store.Config{}); r != "eu-north-1" {
		t.Fatalf("region %q, want AWS_DEFAULT_REGION's", r)
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	if r := region(s3store.Config{}); r != "eu-west-1" {
		t.Fatalf("region %q, want AWS_REGION's", r)
	}
	if r := region(s3store.Config{Region: "us-west-2"}); r != "us-west-2" {
		t.Fatalf("region %q, want the store's", r)
	}
	awsEnv(t, "", "[default]\naws_access_key_id = AKID\naws_secret_access_key = s\n")
	if r := region(s3store.Config{}); r != s3store.DefaultRegion {
		t.Fatalf("region %q, want %s", r, s3store.DefaultRegion)
	}
}

// An unreadable shared file fails New, naming the file and nothing of its
// content.
func TestAWSUnreadableSharedFile(t *testing.T) {
	awsEnv(t, "", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()) // a directory cannot be read as a file
	_, err := s3store.New(context.Background(), s3store.Config{Bucket: "notes"})
	if !errors.Is(err, remote.ErrUnavailable) || !strings.Contains(err.Error(), os.Getenv("AWS_CONFIG_FILE")) {
		t.Fatalf("New = %v, want ErrUnavailable naming the file", err)
	}
}

// Profiles that need a sign-in slivingdoc does not do are refused before
// anything is sent, with the credential_process line that makes them work.
func TestAWSProfilesRefusedWithTheWayAround(t *testing.T) {
	const how = "credential_process = aws configure export-credentials --profile work --format process"
	for name, profile := range map[string]string{
		"sso session": "sso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Dev\n",
		"legacy sso":  "sso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\nsso_account_id = 123456789012\nsso_role_name = Dev\n",
		"aws login":   "login_session = arn:aws:iam::123456789012:user/me\n",
		"mfa":         "role_arn = arn:aws:iam::123456789012:role/r\nsource_profile = base\nmfa_serial = arn:aws:iam::123456789012:mfa/me\n",
	} {
		t.Run(name, func(t *testing.T) {
			awsEnv(t, "[profile work]\n"+profile+"\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n",
				"[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = s\n")
			t.Setenv("AWS_PROFILE", "work")
			wantRefused(t, s3store.Config{}, `profile "work"`, how, "AWS_PROFILE=work-process")
		})
	}
	// The same SSO profile with a credential_process works through it.
	out := filepath.Join(t.TempDir(), "creds.json")
	if err := os.WriteFile(out, []byte(`{"Version": 1, "AccessKeyId": "AKIDVIACLI", "SecretAccessKey": "s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	awsEnv(t, "[profile work]\nsso_session = corp\ncredential_process = cat "+out+"\n", "")
	t.Setenv("AWS_PROFILE", "work")
	wantSigned(t, s3store.Config{}, "AKIDVIACLI", "")
}

// fakeSTS answers AssumeRole and AssumeRoleWithWebIdentity like STS, and
// records each call's form and signing key.
type fakeSTS struct {
	*httptest.Server
	mu    sync.Mutex
	calls []stsCall
	fail  string // an error code to answer with, "" for success
}

type stsCall struct {
	form      url.Values
	signedBy  string // the access key in the Authorization header, "" if unsigned
	region    string
	sessionTk string
}

var stsScope = regexp.MustCompile(`Credential=([^/]+)/\d{8}/([^/]+)/sts/aws4_request`)

func newFakeSTS(t *testing.T) *fakeSTS { return startFakeSTS(t, false) }

// startFakeSTS starts the fake, over TLS (a certificate of its own) when tls.
func startFakeSTS(t *testing.T, tls bool) *fakeSTS {
	f := &fakeSTS{}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		call := stsCall{form: r.PostForm, sessionTk: r.Header.Get("X-Amz-Security-Token")}
		if m := stsScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			call.signedBy, call.region = m[1], m[2]
		}
		f.mu.Lock()
		f.calls = append(f.calls, call)
		fail := f.fail
		f.mu.Unlock()
		action := r.PostForm.Get("Action")
		if fail != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>refused by the fake</Message></Error><RequestId>req-1</RequestId></ErrorResponse>`, fail)
			return
		}
		key := map[string]string{"AssumeRole": "ASIAROLE", "AssumeRoleWithWebIdentity": "ASIAWEB"}[action]
		if key == "" || r.PostForm.Get("Version") != "2011-06-15" {
			http.Error(w, "unknown action", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `<%[1]sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%[1]sResult><Credentials>
<AccessKeyId>%[2]s</AccessKeyId><SecretAccessKey>secret</SecretAccessKey><SessionToken>%[2]s-token</SessionToken>
<Expiration>%[3]s</Expiration></Credentials></%[1]sResult><ResponseMetadata><RequestId>req-2</RequestId></ResponseMetadata></%[1]sResponse>`,
			action, key, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	if tls {
		f.StartTLS()
	} else {
		f.Start()
	}
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSTS) only(t *testing.T) stsCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 {
		t.Fatalf("STS got %d calls, want 1", len(f.calls))
	}
	return f.calls[0]
}

// Web identity (EKS service accounts): the token file is exchanged, unsigned,
// for the role's credentials at the configured STS endpoint.
func TestAWSWebIdentity(t *testing.T) {
	sts := newFakeSTS(t)
	awsEnv(t, "", "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s\n")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("eyJ.web-identity-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/notes")
	t.Setenv("AWS_ROLE_SESSION_NAME", "pod-7")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	wantSigned(t, s3store.Config{}, "ASIAWEB", "ASIAWEB-token")
	call := sts.only(t)
	if call.signedBy != "" || call.form.Get("Action") != "AssumeRoleWithWebIdentity" || call.form.Get("WebIdentityToken") != "eyJ.web-identity-token" ||
		call.form.Get("RoleArn") != "arn:aws:iam::123456789012:role/notes" || call.form.Get("RoleSessionName") != "pod-7" {
		t.Fatalf("STS call %+v", call)
	}

	// Without a role the token is refused before anything is sent.
	t.Setenv("AWS_ROLE_ARN", "")
	wantRefused(t, s3store.Config{}, "AWS_ROLE_ARN")

	// STS's refusal is ErrNoCredentials with STS's code, never the token.
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/notes")
	sts.fail = "InvalidIdentityToken"
	_, err := signedWith(t, s3store.Config{})
	if !errors.Is(err, remote.ErrNoCredentials) || !strings.Contains(err.Error(), "InvalidIdentityToken") || strings.Contains(err.Error(), "eyJ") {
		t.Fatalf("STS refusal reads %v", err)
	}
}

// A role profile: the source profile's keys sign an AssumeRole call, and the
// role's credentials sign the S3 requests.
func TestAWSAssumeRoleProfile(t *testing.T) {
	sts := newFakeSTS(t)
	awsEnv(t, "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = base\nexternal_id = ext-1\nduration_seconds = 900\nrole_session_name = me\nregion = eu-central-1\n",
		"[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = s\naws_session_token = basetoken\n")
	t.Setenv("AWS_PROFILE", "admin")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	wantSigned(t, s3store.Config{}, "ASIAROLE", "ASIAROLE-token")
	call := sts.only(t)
	if call.signedBy != "AKIDBASE" || call.sessionTk != "basetoken" || call.region != "eu-central-1" {
		t.Fatalf("AssumeRole signed by %q (token %q) in %q, want the source profile's keys in the profile's region", call.signedBy, call.sessionTk, call.region)
	}
	for k, want := range map[string]string{"Action": "AssumeRole", "RoleArn": "arn:aws:iam::123456789012:role/admin",
		"ExternalId": "ext-1", "DurationSeconds": "900", "RoleSessionName": "me"} {
		if got := call.form.Get(k); got != want {
			t.Fatalf("AssumeRole %s = %q, want %q", k, got, want)
		}
	}

	// credential_source Environment: the environment's keys sign.
	sts.calls = nil
	awsEnv(t, "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\ncredential_source = Environment\n", "")
	t.Setenv("AWS_PROFILE", "admin")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENVSOURCE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	wantSigned(t, s3store.Config{}, "ASIAROLE", "ASIAROLE-token")
	if call := sts.only(t); call.signedBy != "AKIDENVSOURCE" {
		t.Fatalf("AssumeRole signed by %q, want the environment's key", call.signedBy)
	}

	// A profile that is its own source assumes its role with its own keys.
	sts.calls = nil
	awsEnv(t, "", "[self]\naws_access_key_id = AKIDSELF\naws_secret_access_key = s\nrole_arn = arn:aws:iam::1:role/self\nsource_profile = self\n")
	t.Setenv("AWS_PROFILE", "self")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	wantSigned(t, s3store.Config{}, "ASIAROLE", "ASIAROLE-token")
	if call := sts.only(t); call.signedBy != "AKIDSELF" {
		t.Fatalf("AssumeRole signed by %q, want the profile's own key", call.signedBy)
	}

	// A source_profile loop is refused, not followed forever.
	awsEnv(t, "[profile a]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = b\n[profile b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = a\n", "")
	t.Setenv("AWS_PROFILE", "a")
	wantRefused(t, s3store.Config{}, `source_profile loops back to "a" (a -> b -> a)`)
}

// The container endpoint (ECS, EKS pod identity) with its authorization
// token, and the instance metadata service, each a fake on 127.0.0.1.
func TestAWSContainerAndInstanceCredentials(t *testing.T) {
	creds := func(key string) map[string]string {
		return map[string]string{"AccessKeyId": key, "SecretAccessKey": "s", "Token": key + "-token",
			"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "Code": "Success", "Type": "AWS-HMAC"}
	}
	var gotAuth string
	container := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		_ = json.NewEncoder(w).Encode(creds("ASIACONTAINER"))
	}))
	defer container.Close()
	awsEnv(t, "", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.URL+"/v2/credentials")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("pod-identity-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokenFile)
	wantSigned(t, s3store.Config{}, "ASIACONTAINER", "ASIACONTAINER-token")
	if gotAuth != "pod-identity-token" {
		t.Fatalf("the container endpoint got Authorization %q", gotAuth)
	}
	// Plain http to an address that is neither the loopback nor an agent's.
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds")
	wantRefused(t, s3store.Config{}, "AWS_CONTAINER_CREDENTIALS_FULL_URI")

	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
			_, _ = io.WriteString(w, "imds-token")
		case r.Header.Get("X-Aws-Ec2-Metadata-Token") != "imds-token":
			http.Error(w, "no token", http.StatusUnauthorized)
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
			_, _ = io.WriteString(w, "notes-role")
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/notes-role":
			_ = json.NewEncoder(w).Encode(creds("ASIAINSTANCE"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer imds.Close()
	awsEnv(t, "", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	wantSigned(t, s3store.Config{}, "ASIAINSTANCE", "ASIAINSTANCE-token")
}

// AWS_CA_BUNDLE names the certificates the clients trust instead of the
// system's (a proxy that re-signs TLS): the credential calls honour it too.
func TestAWSCABundle(t *testing.T) {
	sts := startFakeSTS(t, true)
	awsEnv(t, "", "")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("eyJ.token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/notes")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	// The fake's certificate is trusted by nobody yet.
	if _, err := signedWith(t, s3store.Config{}); !errors.Is(err, remote.ErrNoCredentials) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("STS over TLS with an unknown certificate: %v", err)
	}
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sts.Certificate().Raw})
	if err := os.WriteFile(bundle, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	wantSigned(t, s3store.Config{}, "ASIAWEB", "ASIAWEB-token")

	// The S3 requests trust the bundle too: without it the same server is
	// refused. (httptest's servers share one certificate.)
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	for _, tc := range []struct {
		bundle string
		want   error
	}{{bundle, remote.ErrNotFound}, {"", remote.ErrUnavailable}} {
		t.Setenv("AWS_CA_BUNDLE", tc.bundle)
		s := openS3(t, s3store.Config{Bucket: "notes", Endpoint: srv.URL, PathStyle: true, AccessKeyID: "AKID", SecretAccessKey: "s"})
		if _, err := s.Head(context.Background(), "current"); !errors.Is(err, tc.want) {
			t.Fatalf("Head over TLS, AWS_CA_BUNDLE=%q: %v, want %v", tc.bundle, err, tc.want)
		}
	}

	// A bundle that cannot be read fails the opening, naming the file.
	t.Setenv("AWS_CA_BUNDLE", filepath.Join(t.TempDir(), "missing.pem"))
	if _, err := s3store.New(context.Background(), s3store.Config{Bucket: "notes"}); !errors.Is(err, remote.ErrUnavailable) || !strings.Contains(err.Error(), "missing.pem") {
		t.Fatalf("New with an unreadable CA bundle = %v", err)
	}
}

// failingS3 answers every request 500, which the SDK retries, and counts
// them.
type failingS3 struct{ n atomic.Int32 }

func (f *failingS3) RoundTrip(req *http.Request) (*http.Response, error) {
	f.n.Add(1)
	return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// AWS_MAX_ATTEMPTS (or the profile's max_attempts) bounds the SDK's
// attempts of a request it retries; a malformed retry setting fails New.
func TestAWSRetrySettings(t *testing.T) {
	attempts := func() int32 {
		t.Helper()
		f := &failingS3{}
		s := openS3(t, s3store.Config{Bucket: "notes", Endpoint: "http://127.0.0.1:1", PathStyle: true, AccessKeyID: "AKID", SecretAccessKey: "s", Transport: f})
		if _, err := s.Head(context.Background(), "current"); !errors.Is(err, remote.ErrUnavailable) {
			t.Fatalf("Head on a store answering 500: %v", err)
		}
		return f.n.Load()
	}
	awsEnv(t, "[default]\nmax_attempts = 2\n", "")
	if n := attempts(); n != 2 {
		t.Fatalf("%d attempts, want the profile's 2", n)
	}
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	if n := attempts(); n != 1 {
		t.Fatalf("%d attempts, want AWS_MAX_ATTEMPTS's 1", n)
	}
	for k, v := range map[string]string{"AWS_MAX_ATTEMPTS": "many", "AWS_RETRY_MODE": "eager"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := s3store.New(context.Background(), s3store.Config{Bucket: "notes"}); !errors.Is(err, remote.ErrUnavailable) || !strings.Contains(err.Error(), v) {
				t.Fatalf("New with %s=%s: %v, want ErrUnavailable naming the value", k, v, err)
			}
		})
	}
}
