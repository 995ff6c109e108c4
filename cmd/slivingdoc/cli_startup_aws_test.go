package main

import (
	"debug/buildinfo"
	"strings"
	"testing"
)

// notLinkedAWS are the AWS SDK modules whose package initialisation every
// process would pay at start-up, S3 store or not: the SDK's config package,
// which brings the STS, SSO, SSO-OIDC and sign-in clients (their endpoint
// tables and schemas, about 1.5 ms), and every service client, the S3 one
// included (its endpoint rules compile regular expressions at init, and it
// adds 1.5 MB of code whose pages the runtime's start touches). Only the
// SDK's core module (the Signature Version 4 signer, the retryers, the
// credential types), its credential providers and the instance metadata
// client stay: remote/s3store resolves the AWS configuration itself
// (awschain.go) and makes its five S3 requests over net/http (client.go).
var notLinkedAWS = []string{
	"github.com/aws/aws-sdk-go-v2/config",
	"github.com/aws/aws-sdk-go-v2/service", // s3, sts, sso, ssooidc, signin and their internal modules
	"github.com/aws/aws-sdk-go-v2/internal/v4a",
	"github.com/aws/aws-sdk-go-v2/internal/endpoints",
	"github.com/aws/aws-sdk-go-v2/internal/configsources",
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream",
}

func TestStartupLinksNoAWSConfigNorServiceClients(t *testing.T) {
	info, err := buildinfo.ReadFile(cliBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	core := false
	for _, m := range info.Deps {
		core = core || m.Path == "github.com/aws/aws-sdk-go-v2"
		for _, bad := range notLinkedAWS {
			if m.Path == bad || strings.HasPrefix(m.Path, bad+"/") {
				t.Errorf("slivingdoc links %s %s, whose package init every command would pay", m.Path, m.Version)
			}
		}
	}
	if !core {
		t.Fatal("the build information does not list the AWS SDK's core module, which the S3 store signs with; the check would prove nothing")
	}
}
