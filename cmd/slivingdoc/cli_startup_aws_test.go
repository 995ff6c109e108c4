package main

import (
	"debug/buildinfo"
	"strings"
	"testing"
)

// notLinkedAWS are the AWS SDK modules whose package initialisation (the
// STS, SSO, SSO-OIDC and sign-in clients' endpoint tables and schemas) cost
// every process about 1.5 ms at start-up, S3 store or not. The SDK's config
// package brings them all; remote/s3store resolves the AWS configuration and
// its credential chain itself so that none of them is linked.
var notLinkedAWS = []string{
	"github.com/aws/aws-sdk-go-v2/config",
	"github.com/aws/aws-sdk-go-v2/service/sts",
	"github.com/aws/aws-sdk-go-v2/service/sso",
	"github.com/aws/aws-sdk-go-v2/service/ssooidc",
	"github.com/aws/aws-sdk-go-v2/service/signin",
}

func TestStartupLinksNoAWSConfigNorSTSOrSSOClients(t *testing.T) {
	info, err := buildinfo.ReadFile(cliBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	s3 := false
	for _, m := range info.Deps {
		s3 = s3 || m.Path == "github.com/aws/aws-sdk-go-v2/service/s3"
		for _, bad := range notLinkedAWS {
			if m.Path == bad || strings.HasPrefix(m.Path, bad+"/") {
				t.Errorf("slivingdoc links %s %s, whose package init every command would pay", m.Path, m.Version)
			}
		}
	}
	if !s3 {
		t.Fatal("the build information does not list the S3 client; the check would prove nothing")
	}
}
