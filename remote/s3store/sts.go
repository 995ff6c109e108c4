package s3store

// Two STS calls, made over net/http rather than with the SDK's STS client
// (whose package initialisation every process would pay): AssumeRoleWithWebIdentity,
// unsigned, for web identity tokens (EKS service accounts), and AssumeRole,
// signed with the source profile's credentials, for role profiles. Both are
// form-encoded POSTs of STS's query protocol answered in XML.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// stsVersion is the API version every STS query request names.
const stsVersion = "2011-06-15"

// stsEndpoint is the configured STS endpoint (AWS_ENDPOINT_URL_STS, ...),
// else the region's own, as the SDKs use by default.
func (r *awsResolver) stsEndpoint() string {
	if e := r.endpoint("sts"); e != "" {
		return e
	}
	domain := "amazonaws.com"
	if strings.HasPrefix(r.aws.Region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://sts." + r.aws.Region + "." + domain
}

// sessionName is the role session name when the configuration gives none:
// it shows in the account's CloudTrail, so it says who asked.
func sessionName(name string) string {
	if name != "" {
		return name
	}
	return "slivingdoc-" + strconv.FormatInt(time.Now().UnixNano(), 10)
}

// webIdentity exchanges the token in tokenFile for the role's credentials.
// The file is read on every refresh: the orchestrator rotates it.
func (r *awsResolver) webIdentity(tokenFile, roleARN, session string) aws.CredentialsProvider {
	if roleARN == "" {
		return refuse("web identity token file %s is set but no role ARN (AWS_ROLE_ARN or role_arn)", tokenFile)
	}
	return aws.NewCredentialsCache(&stsProvider{
		client: r.aws.HTTPClient, endpoint: r.stsEndpoint(), region: r.aws.Region,
		action: "AssumeRoleWithWebIdentity",
		form: func() (url.Values, error) {
			token, err := os.ReadFile(tokenFile)
			if err != nil {
				return nil, fmt.Errorf("web identity token: %w", err)
			}
			return url.Values{"RoleArn": {roleARN}, "RoleSessionName": {sessionName(session)},
				"WebIdentityToken": {strings.TrimSpace(string(token))}}, nil
		},
	})
}

// assumeRole assumes a profile's role_arn with the source's credentials.
func (r *awsResolver) assumeRole(source aws.CredentialsProvider, prof awsProfile) aws.CredentialsProvider {
	duration, err := durationSeconds(prof)
	if err != nil {
		return refuse("role_arn %s: %v", prof["role_arn"], err)
	}
	return aws.NewCredentialsCache(&stsProvider{
		client: r.aws.HTTPClient, endpoint: r.stsEndpoint(), region: r.aws.Region,
		action: "AssumeRole", signer: source,
		form: func() (url.Values, error) {
			v := url.Values{"RoleArn": {prof["role_arn"]}, "RoleSessionName": {sessionName(prof["role_session_name"])}}
			if id := prof["external_id"]; id != "" {
				v.Set("ExternalId", id)
			}
			if duration > 0 {
				v.Set("DurationSeconds", strconv.Itoa(int(duration/time.Second)))
			}
			return v, nil
		},
	})
}

// stsProvider is one STS action as a credential provider.
type stsProvider struct {
	client   aws.HTTPClient
	endpoint string
	region   string
	action   string
	form     func() (url.Values, error)
	signer   aws.CredentialsProvider // nil: an unsigned call
}

// stsCredentials is the Credentials element of both actions' results.
type stsCredentials struct {
	AccessKeyID     string    `xml:"AccessKeyId"`
	SecretAccessKey string    `xml:"SecretAccessKey"`
	SessionToken    string    `xml:"SessionToken"`
	Expiration      time.Time `xml:"Expiration"`
}

type stsResponse struct {
	Role        *stsCredentials `xml:"AssumeRoleResult>Credentials"`
	WebIdentity *stsCredentials `xml:"AssumeRoleWithWebIdentityResult>Credentials"`
}

type stsErrorResponse struct {
	Code      string `xml:"Error>Code"`
	Message   string `xml:"Error>Message"`
	RequestID string `xml:"RequestId"`
}

// stsMaxResponse bounds what we read of an answer (a real one is ~2 KiB).
const stsMaxResponse = 1 << 20

func (p *stsProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	form, err := p.form()
	if err != nil {
		return aws.Credentials{}, err
	}
	form.Set("Action", p.action)
	form.Set("Version", stsVersion)
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint+"/", strings.NewReader(body))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("sts %s: %w", p.action, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if p.signer != nil {
		src, err := p.signer.Retrieve(ctx)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("sts %s: source credentials: %w", p.action, err)
		}
		sum := sha256.Sum256([]byte(body))
		if err := v4.NewSigner().SignHTTP(ctx, src, req, hex.EncodeToString(sum[:]), "sts", p.region, time.Now()); err != nil {
			return aws.Credentials{}, fmt.Errorf("sts %s: sign: %w", p.action, err)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// The URL names no secret (the token travels in the body).
		return aws.Credentials{}, fmt.Errorf("sts %s: %w", p.action, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, stsMaxResponse))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("sts %s: read the answer: %w", p.action, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e stsErrorResponse
		if xml.Unmarshal(data, &e) != nil || e.Code == "" {
			return aws.Credentials{}, fmt.Errorf("sts %s: HTTP %d", p.action, resp.StatusCode)
		}
		return aws.Credentials{}, fmt.Errorf("sts %s: HTTP %d %s: %s (request %s)", p.action, resp.StatusCode, e.Code, e.Message, e.RequestID)
	}
	var out stsResponse
	if err := xml.Unmarshal(data, &out); err != nil {
		return aws.Credentials{}, fmt.Errorf("sts %s: unreadable answer: %w", p.action, err)
	}
	c := out.Role
	if c == nil {
		c = out.WebIdentity
	}
	if c == nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return aws.Credentials{}, fmt.Errorf("sts %s: the answer holds no credentials", p.action)
	}
	return aws.Credentials{
		AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		CanExpire: !c.Expiration.IsZero(), Expires: c.Expiration, Source: "STS" + p.action,
	}, nil
}
