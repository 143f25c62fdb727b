package intakectl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/client"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The Go client (pkg/client, its own module without access to ingest's
// code) stays in step with the API description services/ingest/openapi.yaml:
// the same paths, request fields, response fields, states and error codes,
// in both directions. The request fields are what the client actually
// sends, captured by a server.
func TestClientMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "services", "ingest", "openapi.yaml"))
	require.NoError(t, err)
	var spec struct {
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			Schemas map[string]schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &spec))
	schemas := spec.Components.Schemas

	src, err := os.ReadFile(filepath.Join(root, "pkg", "client", "api.go"))
	require.NoError(t, err)

	// Paths and methods: those the client calls are exactly the spec's.
	var calls []string
	for _, m := range regexp.MustCompile(`method: http\.Method(\w+), path: "(/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		p := m[2]
		if strings.HasSuffix(p, "/") { // "/documents/" + log_id
			p += "{log_id}"
		}
		calls = append(calls, strings.ToLower(m[1])+" "+p)
	}
	// Every endpoint of the spec is either wrapped by the client or named
	// here as deliberately not wrapped (template management and reprocess
	// are operators' and template authors' tools: intakectl and HTTP), so a
	// new endpoint forces a decision.
	notWrapped := map[string]bool{"get /templates": true, "get /templates/{name}": true, "put /templates/{name}": true,
		"delete /templates/{name}": true, "post /documents/{log_id}/reprocess": true,
		// Price lists are master data an ERP export feeds (intakectl pricelist, HTTP).
		"get /price-lists": true, "get /price-list": true, "put /price-list": true, "delete /price-list": true}
	var specCalls []string
	for p, ops := range spec.Paths {
		for m := range ops {
			if m == "parameters" { // path-level parameters, not an operation
				continue
			}
			if !notWrapped[m+" "+p] {
				specCalls = append(specCalls, m+" "+p)
			}
		}
	}
	require.ElementsMatch(t, specCalls, calls)

	// Response bodies.
	require.ElementsMatch(t, schemas["UploadAcknowledgement"].names(), jsonNames(client.Ack{}))
	require.ElementsMatch(t, schemas["DocumentDetails"].names(), jsonNames(client.Document{}))
	var states []string
	for _, s := range client.States {
		states = append(states, string(s))
	}
	require.ElementsMatch(t, schemas["DocumentState"].Enum, states)
	require.Contains(t, schemas["ResultMode"].Enum, client.ResultModeNoItems)

	// Error codes: the code description lists them; the client's Code…
	// constants are the same set.
	codeRe := regexp.MustCompile(`[a-z_]+`)
	specCodes := codeRe.FindAllString(strings.SplitN(schemas["Error"].Properties["code"].Description, ":", 2)[1], -1)
	var clientCodes []string
	for _, m := range regexp.MustCompile(`(?m)^\s+Code\w+\s+= "(\w+)"`).FindAllStringSubmatch(string(mustRead(t, root, "pkg", "client", "client.go")), -1) {
		clientCodes = append(clientCodes, m[1])
	}
	require.ElementsMatch(t, specCodes, clientCodes)
	require.ElementsMatch(t, schemas["Error"].names(), []string{"code", "message", "details"})

	// Request bodies as sent.
	sent := captureRequests(t)
	mp := requestSchema(t, spec.Paths, "/incoming", "multipart/form-data")
	require.ElementsMatch(t, mp.names(), sent["/incoming"], "multipart fields (two uploads: template and party_id)")
	js := requestSchema(t, spec.Paths, "/incoming-json", "application/json")
	require.ElementsMatch(t, js.names(), sent["/incoming-json"])
	for _, req := range js.Required {
		require.Contains(t, sent["/incoming-json"], req)
	}
}

type schema struct {
	Required    []string          `yaml:"required"`
	Properties  map[string]schema `yaml:"properties"`
	Enum        []string          `yaml:"enum"`
	Description string            `yaml:"description"`
}

func (s schema) names() []string {
	var n []string
	for k := range s.Properties {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func requestSchema(t *testing.T, paths map[string]map[string]any, path, ctype string) schema {
	t.Helper()
	raw, err := yaml.Marshal(paths[path]["post"])
	require.NoError(t, err)
	var op struct {
		RequestBody struct {
			Content map[string]struct {
				Schema schema `yaml:"schema"`
			} `yaml:"content"`
		} `yaml:"requestBody"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &op))
	return op.RequestBody.Content[ctype].Schema
}

// jsonNames lists the JSON field names of a struct.
func jsonNames(v any) []string {
	var n []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			n = append(n, name)
		}
	}
	return n
}

func mustRead(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	require.NoError(t, err)
	return b
}

// captureRequests makes the client send every request field it knows and
// returns the field names per path.
func captureRequests(t *testing.T) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var names []string
		if ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				names = append(names, p.FormName())
			}
		} else {
			var m map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&m))
			for k := range m {
				names = append(names, k)
			}
		}
		for _, n := range names {
			if !slices.Contains(got[r.URL.Path], n) {
				got[r.URL.Path] = append(got[r.URL.Path], n)
			}
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"log_id":"l","status":"received"}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "t", nil)
	require.NoError(t, err)
	ctx := context.Background()
	pdf := []byte("%PDF-1.4")
	for _, r := range []client.UploadRequest{
		{File: bytes.NewReader(pdf), Filename: "a.pdf", MessageID: "m", Subject: "s", Template: "x", ResultMode: client.ResultModeNoItems},
		{File: bytes.NewReader(pdf), Filename: "a.pdf", MessageID: "m", Subject: "s", PartyID: "p"},
	} {
		_, err := c.Upload(ctx, r)
		require.NoError(t, err)
	}
	_, err = c.UploadJSON(ctx, client.UploadRequest{File: bytes.NewReader(pdf), Filename: "a.pdf", MessageID: "m", Subject: "s",
		Template: "x", ResultMode: client.ResultModeNoItems})
	require.NoError(t, err)
	return got
}
