package mailintake_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// graphFake is a loopback stand-in for Microsoft Graph's mail API and Entra
// ID's token endpoint (no Microsoft endpoint is reachable from the tests).
// It answers as Microsoft documents:
//   - POST /{tenant}/oauth2/v2.0/token: the client credentials grant
//     (learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow),
//     {"token_type":"Bearer","expires_in":3599,"access_token":…}, or 401
//     {"error":"invalid_client","error_description":"AADSTS7000215: …"};
//   - GET /v1.0/users/{u}/mailFolders/{id}/messages/delta: pages of at most
//     MaxPage messages, each ending in @odata.nextLink ($skiptoken) or, on
//     the last, @odata.deltaLink ($deltatoken); from a delta token only the
//     changes since, a message that left the folder as {"id", "@removed"};
//     410 Gone for an expired token (message-delta docs);
//   - GET /v1.0/users/{u}/mailFolders?$filter=displayName eq '…', GET
//     /mailFolders/{id} (totalItemCount, unreadItemCount) and POST
//     /mailFolders {"displayName"};
//   - GET …/messages/{id}/attachments (with $select: no contentBytes),
//     …/attachments/{aid} (fileAttachment with contentBytes),
//     …/attachments/{aid}/$value (raw file, or the MIME of an item);
//   - POST …/messages/{id}/move {"destinationId"}: 201 with the message
//     (the id kept, as with Prefer: IdType="ImmutableId");
//   - throttling: 429 / 503 with Retry-After and {"error":{"code":…}}
//     (learn.microsoft.com/graph/throttling); 401 InvalidAuthenticationToken
//     without a valid bearer token.
type graphFake struct {
	URL                             string // the server's root: base_url is URL+"/v1.0"
	Tenant, ClientID, Secret, User  string
	MaxPage                         int
	srv                             *httptest.Server
	mu                              sync.Mutex
	tokens                          map[string]bool
	tokensIssued, throttled, rounds int
	folders                         map[string]string // id → display name
	msgs                            map[string]*fakeMessage
	seq                             int
	expiredBelow                    int
	snapshots                       map[string][]map[string]any
	throttle                        []int
	requests                        []string
	foreignNextLink                 string // set: nextLinks point there instead
}

type fakeMessage struct {
	ID, Subject, InternetMessageID, From string
	Received                             time.Time
	Atts                                 []fakeAttachment
	// history is the message's folder after each change: seq → folder id.
	history []fakeMove
}

type fakeMove struct {
	seq    int
	folder string
}

type fakeAttachment struct {
	ID, Name, ContentType string
	Item                  bool // an itemAttachment: Data is the attached mail's MIME
	Data                  []byte
}

func newGraphFake(t *testing.T) *graphFake {
	f := &graphFake{Tenant: "contoso-tenant", ClientID: "app-1234", Secret: "s3cret-graph-Zq9", User: "orders@acme.example",
		MaxPage: 2, tokens: map[string]bool{}, folders: map[string]string{"inbox-id=": "Inbox"},
		msgs: map[string]*fakeMessage{}, snapshots: map[string][]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", f.token)
	mux.HandleFunc("/v1.0/users/{user}/{rest...}", f.graph)
	f.srv = httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

func graphJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func graphErr(w http.ResponseWriter, status int, code, msg string) {
	graphJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (f *graphFake) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = r.ParseForm()
	switch {
	case r.PathValue("tenant") != f.Tenant:
		graphJSON(w, 400, map[string]string{"error": "invalid_request", "error_description": "AADSTS90002: Tenant not found."})
	case r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "https://graph.microsoft.com/.default":
		graphJSON(w, 400, map[string]string{"error": "invalid_request", "error_description": "AADSTS900144: grant_type or scope."})
	case r.PostForm.Get("client_id") != f.ClientID || r.PostForm.Get("client_secret") != f.Secret:
		graphJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
	default:
		f.tokensIssued++
		tok := fmt.Sprintf("eyJ0eXAi.fake-access-token-%d", f.tokensIssued)
		f.tokens[tok] = true
		graphJSON(w, 200, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
	}
}

// graph checks the bearer token and the throttling queue, then routes.
func (f *graphFake) graph(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
	if !f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		graphErr(w, 401, "InvalidAuthenticationToken", "Access token is empty or invalid.")
		return
	}
	if len(f.throttle) > 0 {
		status := f.throttle[0]
		f.throttle = f.throttle[1:]
		f.throttled++
		w.Header().Set("Retry-After", "1")
		code := map[int]string{429: "TooManyRequests", 503: "ServiceUnavailable"}[status]
		graphErr(w, status, code, "Application is over its MailboxConcurrency limit.")
		return
	}
	if r.PathValue("user") != f.User {
		graphErr(w, 404, "ErrorInvalidUser", "The requested user is invalid.")
		return
	}
	f.route(w, r, strings.Split(r.PathValue("rest"), "/"))
}

func (f *graphFake) route(w http.ResponseWriter, r *http.Request, p []string) {
	switch {
	case len(p) == 1 && p[0] == "mailFolders" && r.Method == "GET":
		f.listFolders(w, r)
	case len(p) == 1 && p[0] == "mailFolders" && r.Method == "POST":
		f.createFolder(w, r)
	case len(p) == 2 && p[0] == "mailFolders" && r.Method == "GET":
		f.getFolder(w, f.folderID(p[1]))
	case len(p) == 4 && p[0] == "mailFolders" && p[2] == "messages" && p[3] == "delta":
		f.delta(w, r, f.folderID(p[1]))
	case len(p) == 3 && p[0] == "messages" && p[2] == "move" && r.Method == "POST":
		f.move(w, r, p[1])
	case len(p) >= 3 && p[0] == "messages" && p[2] == "attachments" && r.Method == "GET":
		f.attachment(w, r, p[1], p[3:])
	default:
		graphErr(w, 400, "BadRequest", "Unsupported segment "+r.URL.Path)
	}
}

// folderID maps the well-known name "inbox" to the inbox's id.
func (f *graphFake) folderID(id string) string {
	if strings.EqualFold(id, "inbox") {
		return "inbox-id="
	}
	return id
}

func (f *graphFake) listFolders(w http.ResponseWriter, r *http.Request) {
	filter := r.URL.Query().Get("$filter")
	name, ok := strings.CutPrefix(filter, "displayName eq '")
	if !ok || !strings.HasSuffix(name, "'") {
		graphErr(w, 400, "BadRequest", "Invalid filter clause")
		return
	}
	name = strings.ReplaceAll(strings.TrimSuffix(name, "'"), "''", "'")
	out := []map[string]string{}
	for id, n := range f.folders {
		if n == name {
			out = append(out, map[string]string{"id": id, "displayName": n})
		}
	}
	graphJSON(w, 200, map[string]any{"value": out})
}

// getFolder answers a mailFolder with its counts (the fake's mails are
// all unread).
func (f *graphFake) getFolder(w http.ResponseWriter, id string) {
	name, ok := f.folders[id]
	if !ok {
		graphErr(w, 404, "ErrorItemNotFound", "The specified folder could not be found in the store.")
		return
	}
	n := 0
	for _, m := range f.msgs {
		if m.folderAt(1<<30) == id {
			n++
		}
	}
	graphJSON(w, 200, map[string]any{"id": id, "displayName": name, "totalItemCount": n, "unreadItemCount": n})
}

func (f *graphFake) createFolder(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DisplayName string `json:"displayName"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.DisplayName == "" {
		graphErr(w, 400, "ErrorInvalidRequest", "displayName is required")
		return
	}
	id := fmt.Sprintf("folder-%d=", len(f.folders))
	f.folders[id] = body.DisplayName
	graphJSON(w, 201, map[string]string{"id": id, "displayName": body.DisplayName})
}

// delta answers a round's first page (from scratch or a delta token) or a
// later page ($skiptoken) of a snapshot taken at the round's start.
func (f *graphFake) delta(w http.ResponseWriter, r *http.Request, folder string) {
	q := r.URL.Query()
	self := f.URL + r.URL.Path
	skip := q.Get("$skiptoken")
	if skip == "" {
		since := -1
		if dt := q.Get("$deltatoken"); dt != "" {
			n, err := strconv.Atoi(dt)
			if err != nil || n < f.expiredBelow {
				graphErr(w, 410, "SyncStateNotFound", "The sync state generation is not found or has expired.")
				return
			}
			since = n
		}
		f.rounds++
		skip = fmt.Sprintf("r%d-0", f.rounds)
		f.snapshots[strings.SplitN(skip, "-", 2)[0]] = f.changes(folder, since)
	}
	key, off, _ := strings.Cut(skip, "-")
	start, _ := strconv.Atoi(off)
	snap, ok := f.snapshots[key]
	if !ok {
		graphErr(w, 400, "BadRequest", "invalid skip token")
		return
	}
	end := min(start+f.MaxPage, len(snap))
	page := map[string]any{"value": snap[start:end]}
	if end < len(snap) {
		next := self + "?$skiptoken=" + key + "-" + strconv.Itoa(end)
		if f.foreignNextLink != "" {
			next = f.foreignNextLink + "?$skiptoken=" + key + "-" + strconv.Itoa(end)
		}
		page["@odata.nextLink"] = next
	} else {
		page["@odata.deltaLink"] = self + "?$deltatoken=" + strconv.Itoa(f.seq)
	}
	graphJSON(w, 200, page)
}

// changes lists the messages in folder now that changed after since (all
// of them from scratch), and those that left it as @removed.
func (f *graphFake) changes(folder string, since int) []map[string]any {
	var out []map[string]any
	ids := make([]string, 0, len(f.msgs))
	for id := range f.msgs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		m := f.msgs[id]
		now, then := m.folderAt(1<<30), m.folderAt(since)
		last := m.history[len(m.history)-1].seq
		switch {
		case now == folder && (since < 0 || last > since):
			out = append(out, m.json())
		case since >= 0 && then == folder && now != folder:
			out = append(out, map[string]any{"id": id, "@removed": map[string]string{"reason": "deleted"}})
		}
	}
	return out
}

func (m *fakeMessage) folderAt(seq int) string {
	folder := ""
	for _, h := range m.history {
		if h.seq <= seq {
			folder = h.folder
		}
	}
	return folder
}

func (m *fakeMessage) json() map[string]any {
	name, addr, _ := strings.Cut(m.From, "|")
	return map[string]any{"@odata.type": "#microsoft.graph.message", "id": m.ID, "subject": m.Subject,
		"internetMessageId": m.InternetMessageID, "receivedDateTime": m.Received.UTC().Format(time.RFC3339),
		"hasAttachments": len(m.Atts) > 0, "from": map[string]any{"emailAddress": map[string]string{"name": name, "address": addr}}}
}

func (f *graphFake) move(w http.ResponseWriter, r *http.Request, id string) {
	var body struct {
		DestinationID string `json:"destinationId"`
	}
	m, ok := f.msgs[id]
	if !ok {
		graphErr(w, 404, "ErrorItemNotFound", "The specified object was not found in the store.")
		return
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || f.folders[f.folderID(body.DestinationID)] == "" {
		graphErr(w, 400, "ErrorInvalidIdMalformed", "Id is malformed.")
		return
	}
	f.seq++
	m.history = append(m.history, fakeMove{f.seq, f.folderID(body.DestinationID)})
	graphJSON(w, 201, m.json())
}

// attachment answers the list, one attachment, or its $value.
func (f *graphFake) attachment(w http.ResponseWriter, r *http.Request, id string, rest []string) {
	m, ok := f.msgs[id]
	if !ok {
		graphErr(w, 404, "ErrorItemNotFound", "The specified object was not found in the store.")
		return
	}
	if len(rest) == 0 {
		list := []map[string]any{}
		for _, a := range m.Atts {
			list = append(list, a.json(r.URL.Query().Get("$select") == ""))
		}
		graphJSON(w, 200, map[string]any{"value": list})
		return
	}
	i := slices.IndexFunc(m.Atts, func(a fakeAttachment) bool { return a.ID == rest[0] })
	switch {
	case i < 0:
		graphErr(w, 404, "ErrorItemNotFound", "The attachment was not found.")
	case len(rest) == 1:
		graphJSON(w, 200, m.Atts[i].json(true))
	case len(rest) == 2 && rest[1] == "$value":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(m.Atts[i].Data)
	default:
		graphErr(w, 400, "BadRequest", "Unsupported segment")
	}
}

func (a fakeAttachment) json(content bool) map[string]any {
	j := map[string]any{"id": a.ID, "name": a.Name, "size": len(a.Data) + 180, "isInline": false}
	if a.Item {
		j["@odata.type"], j["contentType"] = "#microsoft.graph.itemAttachment", nil
		return j
	}
	j["@odata.type"], j["contentType"] = "#microsoft.graph.fileAttachment", a.ContentType
	if content {
		j["contentBytes"] = base64.StdEncoding.EncodeToString(a.Data)
	}
	return j
}

// deliver puts a message into the inbox, as mail arriving.
func (f *graphFake) deliver(m fakeMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	m.Received = time.Date(2025, 3, 1, 8, 0, f.seq, 0, time.UTC)
	m.history = []fakeMove{{f.seq, "inbox-id="}}
	f.msgs[m.ID] = &m
}

// folder is the display name of the folder m is in.
func (f *graphFake) folder(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.folders[f.msgs[id].folderAt(1<<30)]
}

// Throttle answers the next Graph requests with these statuses.
func (f *graphFake) Throttle(statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttle = append(f.throttle, statuses...)
}

// RevokeTokens makes every access token issued so far answer 401.
func (f *graphFake) RevokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = map[string]bool{}
}

// ExpireDeltaTokens makes every delta token issued so far answer 410.
func (f *graphFake) ExpireDeltaTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expiredBelow = f.seq + 1
}

// Requests returns the Graph requests seen ("METHOD path?query").
func (f *graphFake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// counters returns the throttled answers, delta rounds started and tokens
// issued.
func (f *graphFake) counters() (throttled, rounds, tokens int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.throttled, f.rounds, f.tokensIssued
}
