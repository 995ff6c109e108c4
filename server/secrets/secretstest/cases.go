// Package secretstest builds credentials of every format server/secrets
// recognises, for tests. Tokens are made at run time from a seeded
// generator, so no credential of any format is written in the repository.
package secretstest

import (
	"math/rand/v2"
)

// Alphabets of the token formats.
const (
	Alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	Base32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	URLSafe = Alnum + "-_"
	Base64  = Alnum + "+/"
	Digits  = "0123456789"
)

// Gen draws random strings from a seed.
type Gen struct{ R *rand.Rand }

// NewGen returns a generator for seed.
func NewGen(seed uint64) *Gen { return &Gen{rand.New(rand.NewPCG(seed, seed*31+7))} }

// Str returns n characters of alphabet.
func (g *Gen) Str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.R.IntN(len(alphabet))]
	}
	return string(b)
}

// Case is one credential placed in a note: the lines to add, the line
// range (one-based, within Lines) a refusal must name, and the secret
// text that must appear in no output.
type Case struct {
	Rule       string
	Lines      []string
	Start, End int
	Secret     string
}

// Cases returns one case per rule and notable variant, from seed.
func Cases(seed uint64) []Case {
	g := NewGen(seed)
	id := "AKIA" + g.Str(Base32, 16)
	key := g.Str(Base64, 38) + "a7"
	sts := "ASIA" + g.Str(Base32, 16)
	pem := []string{"-----BEGIN RSA PRIVATE KEY-----"}
	body := ""
	for range 5 {
		l := g.Str(Base64, 64)
		body += l
		pem = append(pem, l)
	}
	pem = append(pem, g.Str(Base64, 20)+"==", "-----END RSA PRIVATE KEY-----")
	one := func(rule, prefix, token, suffix string) Case {
		return Case{Rule: rule, Lines: []string{prefix + token + suffix}, Start: 1, End: 1, Secret: token}
	}
	return []Case{
		{Rule: "aws-access-key", Lines: []string{"[default]", "aws_access_key_id = " + id, "aws_secret_access_key = " + key}, Start: 2, End: 3, Secret: key},
		{Rule: "aws-access-key", Lines: []string{"export AWS_SECRET_ACCESS_KEY=" + key, "", "export AWS_ACCESS_KEY_ID=" + sts}, Start: 1, End: 3, Secret: key},
		one("github-token", "token: ", "ghp_"+g.Str(Alnum, 36), ""),
		one("github-token", "GH=", "github_pat_"+g.Str(Alnum, 22)+"_"+g.Str(Alnum, 59), ""),
		one("gitlab-token", "curl -H 'PRIVATE-TOKEN: ", "glpat-"+g.Str(URLSafe, 20), "' https://gitlab.example/api"),
		one("slack-token", "SLACK_BOT_TOKEN=", "xoxb-"+g.Str(Digits, 12)+"-"+g.Str(Digits, 13)+"-"+g.Str(Alnum, 24), ""),
		one("slack-token", "hook: ", "https://hooks.slack.com/services/T"+g.Str(Base32, 10)+"/B"+g.Str(Base32, 10)+"/"+g.Str(Alnum, 24), ""),
		one("stripe-live-key", "stripe.api_key = \"", "sk_live_"+g.Str(Alnum, 24), "\""),
		one("openai-api-key", "OPENAI_API_KEY=", "sk-proj-"+g.Str(URLSafe, 156), ""),
		one("openai-api-key", "key ", "sk-"+g.Str(Alnum, 20)+"T3BlbkFJ"+g.Str(Alnum, 20), " (old)"),
		one("anthropic-api-key", "ANTHROPIC_API_KEY=", "sk-ant-api03-"+g.Str(URLSafe, 93)+"AA", ""),
		one("google-api-key", "maps key: ", "AIza"+g.Str(URLSafe, 35), ""),
		{Rule: "pem-private-key", Lines: pem, Start: 1, End: len(pem), Secret: body[:64]},
	}
}
