package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// operator is the person acting in the console. Every action the console
// takes is attributed to its name in the document's history, and an
// operator limited to some clients sees and acts on only their documents.
type operator struct {
	Name    string   // shown in the history as "operator:<Name>"
	Clients []string // nil: every client
}

// consoleOperator is who holds the shared INTAKE_OPS_TOKEN: it has no name
// of its own, so its actions are attributed to the console.
var consoleOperator = operator{Name: store.SharedOperatorName}

// nobody is operatorOf outside o.auth: it sees no client, so a page
// mounted without auth by mistake shows nothing instead of everything.
var nobody = operator{Clients: []string{}}

// actor is the operator's name as the history records it.
func (op operator) actor() string { return "operator:" + op.Name }

// sees reports whether the operator may see and act on clientID's documents.
func (op operator) sees(clientID string) bool {
	return op.Clients == nil || slices.Contains(op.Clients, clientID)
}

// operatorOf is the operator auth found for the request.
func operatorOf(c echo.Context) operator {
	if op, ok := c.Get("ops_operator").(operator); ok {
		return op
	}
	return nobody
}

func fromAccount(a store.Operator) operator { return operator{Name: a.Name, Clients: a.Clients} }

// identity is who auth found and how.
type identity struct {
	op operator
	// session is the cookie value of the request's session ("": none).
	session string
	// browser: the credential is one a browser sends on its own (a
	// cookie, the proxy's header), so every form must carry the session's
	// CSRF value. A bearer token is sent only by whoever holds it.
	browser bool
	// proxy: the trusted header named the operator (the console then has
	// no logout of its own: the proxy's login outlives it).
	proxy bool
}

// identify finds the operator of a request: the trusted proxy header when
// configured and sent by a trusted proxy, else a bearer token (the shared
// one or an operator's), else the session cookie. ok is false when none
// holds; a proxy-named user without an account is refused with 403 here.
func (o *ops) identify(c echo.Context) (id identity, ok bool, err error) {
	if name, from := o.proxyUser(c); from {
		return o.identifyByProxy(c, name)
	}
	ctx := c.Request().Context()
	if tok, ok := bearerToken(c.Request().Header.Get(echo.HeaderAuthorization)); ok {
		op, ok, err := o.operatorByToken(ctx, tok)
		return identity{op: op}, ok, err
	}
	ck, err := c.Cookie(opsCookie)
	if err != nil || ck.Value == "" {
		return identity{}, false, nil
	}
	sess, open, err := o.store.OpenOpsSession(ctx, sessionHash(ck.Value))
	if err != nil || !open {
		return identity{}, false, err
	}
	switch {
	case sess.Operator == nil && o.cfg.Token != "" && sess.TokenTag == o.tag:
		return identity{op: consoleOperator, session: ck.Value, browser: true}, true, nil
	case sess.Operator != nil && sess.TokenTag == store.OpsSessionByToken:
		return identity{op: fromAccount(*sess.Operator), session: ck.Value, browser: true}, true, nil
	}
	// The shared token changed, or a proxy session without the proxy.
	return identity{}, false, nil
}

// operatorByToken checks a token: the shared INTAKE_OPS_TOKEN (when set)
// or an operator's own.
func (o *ops) operatorByToken(ctx context.Context, tok string) (operator, bool, error) {
	if tok == "" {
		return operator{}, false, nil
	}
	if o.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(o.cfg.Token)) == 1 {
		return consoleOperator, true, nil
	}
	a, err := o.store.OperatorByToken(ctx, tok)
	if document.ErrorKind(err) == document.EUNAUTHENTICATED {
		return operator{}, false, nil
	}
	if err != nil {
		return operator{}, false, err
	}
	return fromAccount(a), true, nil
}

// proxyUser is the user the trusted header names, when the header is
// configured and the request's TCP peer is a trusted proxy. The peer, not
// X-Forwarded-For (which anyone can send), decides; from anyone else the
// header is ignored.
func (o *ops) proxyUser(c echo.Context) (string, bool) {
	if o.cfg.TrustedUserHeader == "" {
		return "", false
	}
	name := strings.TrimSpace(c.Request().Header.Get(o.cfg.TrustedUserHeader))
	if name == "" {
		return "", false
	}
	ap, err := netip.ParseAddrPort(c.Request().RemoteAddr)
	if err != nil || !slices.ContainsFunc(o.cfg.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(ap.Addr().Unmap()) }) {
		o.logger.Warn("ops: trusted user header from an untrusted address ignored",
			zap.String("header", o.cfg.TrustedUserHeader), zap.String("remote", c.Request().RemoteAddr))
		return "", false
	}
	return name, true
}

// identifyByProxy takes the proxy's word for who the user is; the account
// must exist, so its client limits apply. The session (opened on the
// first page a browser asks for) carries the CSRF value of the forms.
func (o *ops) identifyByProxy(c echo.Context, name string) (identity, bool, error) {
	ctx := c.Request().Context()
	a, err := o.store.Operator(ctx, name)
	if document.ErrorKind(err) == document.ENOTFOUND {
		o.logger.Warn("ops: the proxy named a user without an operator account", zap.String("user", name))
		return identity{}, false, errNoAccount
	}
	if err != nil {
		return identity{}, false, err
	}
	id := identity{op: fromAccount(a), browser: true, proxy: true}
	if ck, err := c.Cookie(opsCookie); err == nil && ck.Value != "" {
		sess, open, err := o.store.OpenOpsSession(ctx, sessionHash(ck.Value))
		if err != nil {
			return identity{}, false, err
		}
		if open && sess.TokenTag == store.OpsSessionByProxy && sess.Operator != nil && sess.Operator.Name == name {
			id.session = ck.Value
			return id, true, nil
		}
	}
	r := c.Request()
	if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
		if id.session, err = o.openSession(c, store.OpsSessionByProxy, name); err != nil {
			return identity{}, false, err
		}
	}
	return id, true, nil
}

// errNoAccount: the proxy named a user who has no operator account.
var errNoAccount = document.Errorf(document.EUNAUTHENTICATED, "no operator account")

// openSession records a new session and sets its cookie; it returns the
// cookie value.
func (o *ops) openSession(c echo.Context, tag, operatorName string) (string, error) {
	var id [32]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	session := base64.RawURLEncoding.EncodeToString(id[:])
	if err := o.store.CreateOpsSession(c.Request().Context(), sessionHash(session), tag, operatorName, o.cfg.SessionTTL); err != nil {
		return "", err
	}
	c.SetCookie(&http.Cookie{Name: opsCookie, Value: session, Path: "/ops/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Scheme() == "https", MaxAge: int(o.cfg.SessionTTL.Seconds())})
	return session, nil
}

// sessionHash is a session as stored: the SHA-256 of its cookie value.
func sessionHash(session string) []byte {
	sum := sha256.Sum256([]byte(session))
	return sum[:]
}

// visibleDocument is the document of the route's :log_id when the
// operator may see it; another client's is ENOTFOUND, word for word as an
// unknown log id, so a limited operator cannot tell that it exists.
func (o *ops) visibleDocument(c echo.Context) (document.Document, error) {
	logID := c.Param("log_id")
	d, err := o.store.DocumentByLogIDAnyClient(c.Request().Context(), logID)
	if err != nil {
		return d, err
	}
	if !operatorOf(c).sees(d.ClientID) {
		return document.Document{}, document.CodedErrorf(document.ENOTFOUND, "document_not_found", "document %s not found", logID)
	}
	return d, nil
}
