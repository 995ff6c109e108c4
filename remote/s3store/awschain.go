package s3store

// The AWS configuration of the S3 client: region, endpoint, CA bundle and
// credentials, resolved from the same environment variables and shared files
// as the AWS CLI, in the SDK's order. We resolve it here rather than with the
// SDK's config package because that package links the STS, SSO, SSO-OIDC and
// sign-in clients, whose package initialisation (endpoint tables, schemas)
// every process of ours would pay at start-up, S3 store or not.
//
// Credentials, first source that applies:
//
//	Config.AccessKeyID/SecretAccessKey    static keys (tests, embedding)
//	AWS_PROFILE / AWS_DEFAULT_PROFILE set that profile, and nothing else
//	AWS_ACCESS_KEY_ID + _SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN)
//	AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN   STS AssumeRoleWithWebIdentity (EKS)
//	the default profile, which falls back to
//	  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI (ECS, EKS pod identity)
//	  the instance metadata service, unless AWS_EC2_METADATA_DISABLED=true
//
// A profile gives, first that applies: role_arn with source_profile or
// credential_source (STS AssumeRole signed with the source's keys); role_arn
// with web_identity_token_file; static keys; credential_process; then the
// container and instance sources. A profile that needs a sign-in (SSO,
// `aws login`) or an MFA code is refused with a message saying how to use it
// through credential_process. Nothing is sent while resolving: providers
// fetch on first use, so a failure shows as remote.ErrNoCredentials there.

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/credentials/processcreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// awsSettings is what New takes from the AWS configuration.
type awsSettings struct {
	// aws has the region (DefaultRegion when nothing names one), the
	// credentials and the HTTP client, which the credential providers'
	// own requests use too.
	aws      aws.Config
	endpoint string // the S3 endpoint the configuration names, "" for AWS's
}

// awsResolver resolves one store's settings; aws is the configuration the
// credential providers' own clients (STS, container, IMDS) start from.
type awsResolver struct {
	files   awsFiles
	profile string // the profile in use
	aws     aws.Config
}

// resolveAWS reads the environment and the shared files. Only an unreadable
// file is an error; what cannot give credentials yields a provider that
// reports why on first use.
func resolveAWS(cfg Config, base aws.Config) (awsSettings, error) {
	configPath, credentialsPath := awsFilePaths()
	files, err := loadAWSFiles(configPath, credentialsPath)
	if err != nil {
		return awsSettings{}, err
	}
	profile, profileSet := firstEnv("AWS_PROFILE", "AWS_DEFAULT_PROFILE"), true
	if profile == "" {
		profile, profileSet = "default", false
	}
	r := &awsResolver{files: files, profile: profile}
	prof := files.profiles[profile]

	r.aws = base
	r.aws.Region = cfg.Region
	if r.aws.Region == "" {
		r.aws.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if r.aws.Region == "" {
		r.aws.Region = prof["region"]
	}
	if r.aws.Region == "" {
		r.aws.Region = DefaultRegion
	}
	if err := r.retrySettings(prof); err != nil {
		return awsSettings{}, err
	}
	// A buildable client, so that the CA bundle can be added to it.
	client := awshttp.NewBuildableClient().
		WithTransportOptions(func(tr *http.Transport) { tr.ResponseHeaderTimeout = s3ResponseTimeout })
	caBundle := os.Getenv("AWS_CA_BUNDLE")
	if caBundle == "" {
		caBundle = prof["ca_bundle"]
	}
	if caBundle != "" {
		pool, err := rootCAs(caBundle)
		if err != nil {
			return awsSettings{}, err
		}
		client = client.WithTransportOptions(func(tr *http.Transport) {
			if tr.TLSClientConfig == nil {
				tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			tr.TLSClientConfig.RootCAs = pool
		})
	}
	r.aws.HTTPClient = client
	var creds aws.CredentialsProvider

	switch {
	case cfg.AccessKeyID != "" && cfg.SecretAccessKey != "":
		creds = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")
	case profileSet:
		if prof == nil {
			creds = refuse("profile %q (AWS_PROFILE) is in neither %s nor %s", profile, configPath, credentialsPath)
		} else {
			creds = r.fromProfile(profile, nil)
		}
	case envKeys() != nil:
		creds = envKeys()
	case os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "":
		creds = r.webIdentity(os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), os.Getenv("AWS_ROLE_ARN"), os.Getenv("AWS_ROLE_SESSION_NAME"))
	default:
		creds = r.fromProfile(profile, nil)
	}
	set := awsSettings{aws: r.aws, endpoint: r.endpoint("s3")}
	set.aws.Credentials = creds
	return set, nil
}

// retrySettings takes the SDK's retry settings: AWS_MAX_ATTEMPTS (or the
// profile's max_attempts; 0 keeps the SDK's default of 3) and
// AWS_RETRY_MODE (retry_mode: standard or adaptive). They apply to the
// requests the SDK may retry; conditional writes are never retried.
func (r *awsResolver) retrySettings(prof awsProfile) error {
	if v := cmp.Or(os.Getenv("AWS_MAX_ATTEMPTS"), prof["max_attempts"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("max attempts %q is not a number of attempts", v)
		}
		r.aws.RetryMaxAttempts = n
	}
	if v := cmp.Or(os.Getenv("AWS_RETRY_MODE"), prof["retry_mode"]); v != "" {
		mode, err := aws.ParseRetryMode(v)
		if err != nil {
			return fmt.Errorf("retry mode: %w", err)
		}
		r.aws.RetryMode = mode
	}
	return nil
}

// endpoint returns the endpoint the configuration names for a service: its
// own variable (AWS_ENDPOINT_URL_S3), AWS_ENDPOINT_URL, the profile's
// services section, the profile's endpoint_url; none when
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (or the profile) says to ignore them.
func (r *awsResolver) endpoint(service string) string {
	prof := r.files.profiles[r.profile]
	ignore := os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
	if ignore == "" {
		ignore = prof["ignore_configured_endpoint_urls"]
	}
	if strings.EqualFold(ignore, "true") {
		return ""
	}
	if v := os.Getenv("AWS_ENDPOINT_URL_" + strings.ToUpper(service)); v != "" {
		return v
	}
	if v := os.Getenv("AWS_ENDPOINT_URL"); v != "" {
		return v
	}
	if v := r.files.services[prof["services"]][service+".endpoint_url"]; v != "" {
		return v
	}
	return prof["endpoint_url"]
}

// fromProfile returns the credentials profile name gives; via lists the
// profiles whose source_profile led here, so that a loop is refused.
func (r *awsResolver) fromProfile(name string, via []string) aws.CredentialsProvider {
	prof := r.files.profiles[name] // nil reads as empty: the default profile may be absent
	how := func(what string) string {
		// One line: the message ends up in a log record.
		return fmt.Sprintf("let the AWS CLI give the credentials: add a profile [profile %s-process] with the line "+
			"`credential_process = aws configure export-credentials --profile %s --format process` and set AWS_PROFILE=%s-process (%s)",
			name, name, name, what)
	}
	if role := prof["role_arn"]; role != "" && (prof["source_profile"] != "" || prof["credential_source"] != "") {
		if prof["mfa_serial"] != "" {
			return refuse("profile %q assumes a role with an MFA code, which slivingdoc cannot ask for; %s", name, how("the AWS CLI asks for the code"))
		}
		var source aws.CredentialsProvider
		switch src := prof["source_profile"]; {
		case slices.Contains(via, src):
			return refuse("profile %q: source_profile loops back to %q (%s)", name, src, strings.Join(slices.Concat(via, []string{name, src}), " -> "))
		case src == name:
			// A profile may be its own source: its static keys assume its role.
			source = staticKeys(prof)
			if source == nil {
				return refuse("profile %q is its own source_profile but has no aws_access_key_id and aws_secret_access_key", name)
			}
		case src != "":
			if r.files.profiles[src] == nil {
				return refuse("profile %q: its source_profile %q is not defined", name, src)
			}
			source = r.fromProfile(src, append(slices.Clip(via), name))
		default:
			source = r.namedSource(name, prof["credential_source"])
		}
		return r.assumeRole(source, prof)
	}
	if prof["web_identity_token_file"] != "" {
		return r.webIdentity(prof["web_identity_token_file"], prof["role_arn"], prof["role_session_name"])
	}
	if p := staticKeys(prof); p != nil {
		return p
	}
	// credential_process before the sign-in checks: a profile that has both
	// works through the process.
	if cmd := prof["credential_process"]; cmd != "" {
		return aws.NewCredentialsCache(processcreds.NewProvider(cmd))
	}
	if prof["sso_session"] != "" || prof["sso_start_url"] != "" || prof["sso_account_id"] != "" {
		return refuse("profile %q signs in with AWS IAM Identity Center (SSO), which slivingdoc does not do itself; %s", name, how("run aws sso login first"))
	}
	if prof["login_session"] != "" {
		return refuse("profile %q signs in with `aws login`, which slivingdoc does not do itself; %s", name, how("run aws login first"))
	}
	if prof["role_arn"] != "" {
		return refuse("profile %q has role_arn but neither source_profile, credential_source nor web_identity_token_file", name)
	}
	return r.containerOrInstance()
}

// namedSource is a credential_source: where a role profile's own
// credentials come from.
func (r *awsResolver) namedSource(profile, source string) aws.CredentialsProvider {
	switch source {
	case "Environment":
		if p := envKeys(); p != nil {
			return p
		}
		return refuse("profile %q: credential_source Environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set", profile)
	case "Ec2InstanceMetadata":
		return r.instance()
	case "EcsContainer":
		if p := r.container(); p != nil {
			return p
		}
		return refuse("profile %q: credential_source EcsContainer, but neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor _FULL_URI is set", profile)
	}
	return refuse("profile %q: credential_source %q is not one of Environment, Ec2InstanceMetadata, EcsContainer", profile, source)
}

// containerOrInstance is the end of the chain: a container's credential
// endpoint when one is set, else the instance metadata service.
func (r *awsResolver) containerOrInstance() aws.CredentialsProvider {
	if p := r.container(); p != nil {
		return p
	}
	if strings.EqualFold(os.Getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return refuse("no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_CONTAINER_CREDENTIALS_*) nor in profile %q, and the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)", r.profile)
	}
	return r.instance()
}

func (r *awsResolver) instance() aws.CredentialsProvider {
	return aws.NewCredentialsCache(ec2rolecreds.New(func(o *ec2rolecreds.Options) {
		o.Client = imds.NewFromConfig(r.aws) // reads AWS_EC2_METADATA_* itself
	}))
}

// ecsEndpoint is where AWS_CONTAINER_CREDENTIALS_RELATIVE_URI points.
const ecsEndpoint = "http://169.254.170.2"

// container returns the container credential endpoint's provider, or nil
// when the environment names none. A full URI over plain http must point at
// the loopback or the ECS/EKS agents' addresses, so that credentials are
// never fetched in clear from elsewhere.
func (r *awsResolver) container() aws.CredentialsProvider {
	u := ""
	if rel := os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		u = ecsEndpoint + rel
	} else if full := os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"); full != "" {
		if err := checkContainerURI(full); err != nil {
			return refuse("AWS_CONTAINER_CREDENTIALS_FULL_URI: %v", err)
		}
		u = full
	} else {
		return nil
	}
	return aws.NewCredentialsCache(endpointcreds.New(u, func(o *endpointcreds.Options) {
		o.HTTPClient = r.aws.HTTPClient
		o.AuthorizationToken = os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
		if file := os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
			// Read on every fetch: the agent rotates the file.
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(file)
				if err != nil {
					return "", fmt.Errorf("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %w", err)
				}
				return strings.TrimSpace(string(b)), nil
			})
		}
	}))
}

func checkContainerURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("no host")
	}
	if u.Scheme != "http" {
		return nil
	}
	addrs := []string{host}
	if net.ParseIP(host) == nil {
		if addrs, err = net.LookupHost(host); err != nil {
			return fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		if ip == nil || !(ip.IsLoopback() || ip.Equal(net.IPv4(169, 254, 170, 2)) || ip.Equal(net.IPv4(169, 254, 170, 23)) ||
			ip.Equal(net.ParseIP("fd00:ec2::23"))) {
			return fmt.Errorf("plain http to %s: only the loopback and the ECS/EKS agents' addresses are allowed", host)
		}
	}
	return nil
}

// envKeys returns the environment's static keys, nil when unset. The SDKs
// also accept the older AWS_ACCESS_KEY and AWS_SECRET_KEY.
func envKeys() aws.CredentialsProvider {
	id, secret := firstEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY"), firstEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	if id == "" || secret == "" {
		return nil
	}
	return credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))
}

func staticKeys(prof awsProfile) aws.CredentialsProvider {
	if prof["aws_access_key_id"] == "" || prof["aws_secret_access_key"] == "" {
		return nil
	}
	return credentials.NewStaticCredentialsProvider(prof["aws_access_key_id"], prof["aws_secret_access_key"], prof["aws_session_token"])
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// refusedProvider gives no credentials, and says why; the client sends
// nothing, and the store reports remote.ErrNoCredentials.
type refusedProvider struct{ err error }

func (p refusedProvider) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, p.err
}

func refuse(format string, args ...any) aws.CredentialsProvider {
	return refusedProvider{fmt.Errorf(format, args...)}
}

// durationSeconds parses a profile's duration_seconds (0 when unset: STS's
// default of one hour).
func durationSeconds(prof awsProfile) (time.Duration, error) {
	s := prof["duration_seconds"]
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("duration_seconds %q is not a positive number of seconds", s)
	}
	return time.Duration(n) * time.Second, nil
}

// rootCAs returns the PEM certificates in path, which then replace the
// system's roots, as in the SDKs (a proxy that re-signs TLS brings its own).
func rootCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", path)
	}
	return pool, nil
}
