package catalogue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"go.uber.org/zap"
)

// DefaultRecheck is how often the catalogue re-reads the current
// versions even without a notification, healing one that was missed (a
// LISTEN connection that broke between a push and its reconnect).
const DefaultRecheck = 10 * time.Second

// DirActor is who INTAKE_TEMPLATES_DIR's versions are pushed by.
const DirActor = "INTAKE_TEMPLATES_DIR"

// Version is one compiled template version. It is immutable: a document
// processed with it sees the same template from start to end, whatever is
// pushed meanwhile.
type Version struct {
	TemplateID int64
	Name       string
	ClientID   string // scope; "" = global
	Number     int
	SHA256     []byte
	Template   *template.Template
	// Set holds Template alone, for template.Set.Run.
	Set *template.Set
}

// String names the version for logs and the ops console ("NAME v3").
func (v *Version) String() string {
	if v.Builtin() {
		return v.Name + " (built in)"
	}
	return fmt.Sprintf("%s v%d", v.Name, v.Number)
}

// Builtin reports whether v is the built-in generic reader (GenericVersion)
// rather than a stored template: it has no version, SHA-256 or regexes, and
// the processor runs pkg/generic instead of its Set.
func (v *Version) Builtin() bool { return v.TemplateID == 0 }

// GenericVersion stands for the built-in template generic.Name, which every
// client may name at upload and which no stored template can shadow. Its
// Template is an order template without rules, requirements or mappings
// (what later stages ask of a pinned version, such as ignored_feedback);
// its Set is empty, so a structured attachment is read by the built-in
// order template of template.Set.RunStructured, as for keyword selection.
var GenericVersion = func() *Version {
	set, err := template.NewSet()
	if err != nil {
		panic(err) // an empty set has nothing to conflict
	}
	return &Version{Name: generic.Name, Set: set,
		Template: &template.Template{Name: generic.Name, DocIntake: template.DocIntake{DocumentType: order.TypeOrder}}}
}()

// ErrReservedName marks a template that names itself generic.Name: the
// built-in reader owns that name for every client, so no stored template
// may take it.
var ErrReservedName = errors.New("the template name " + generic.Name + " is reserved for the built-in generic reader; choose another name")

// ErrInvalidName marks a template name outside templateName. Names are
// shown in the ops console, logs and API answers and become file names
// (NAME.yml, NAME.samples): a name of thousands of characters or with
// bidi controls would garble or disguise them there. The message never
// repeats the name for the same reason.
var ErrInvalidName = errors.New("a template name is 1 to 100 ASCII letters, digits, '-', '_' or '.', starting with a letter or digit")

// templateName is what a template may be called. The first character is
// a letter or digit so a name is never ".", "..", a hidden file or a
// command-line flag.
var templateName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckTemplateName returns ErrInvalidName unless name is a valid template
// name. Every way in checks it: PUT /templates/{name}, intakectl templates
// push and the templates directory (all through ParseStrict).
func CheckTemplateName(name string) error {
	if !templateName.MatchString(name) {
		return ErrInvalidName
	}
	return nil
}

// snapshot is one immutable view of the current versions.
type snapshot struct {
	global, globalParty map[string]*Version
	client, clientParty map[string]map[string]*Version // client id → key → version
}

func (s *snapshot) byName(clientID, name string) (*Version, bool) {
	if v, ok := s.client[clientID][name]; ok {
		return v, true
	}
	v, ok := s.global[name]
	return v, ok
}

func (s *snapshot) byParty(clientID, id string) (*Version, bool) {
	if v, ok := s.clientParty[clientID][id]; ok {
		return v, true
	}
	v, ok := s.globalParty[id]
	return v, ok
}

type versionKey struct {
	id      int64
	version int
}

// Catalogue is the live template catalogue: the current version of every
// template in PostgreSQL, compiled, reloaded within moments of a change
// (LISTEN/NOTIFY on store.TemplatesChannel, plus a periodic re-check). A
// client sees its own enabled templates and the enabled global ones; its
// own wins over a global one with the same name or party id. Safe for
// concurrent use.
type Catalogue struct {
	st  *store.Store
	log *zap.Logger

	snap atomic.Pointer[snapshot]

	mu       sync.Mutex // serialises reloads and guards versions
	versions map[versionKey]*Version

	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}
	// reloaded, when set, is called after every reload (tests).
	reloaded  func()
	namesOnly bool // Options.NamesOnly
}

// Options tune Open.
type Options struct {
	// Dirs are synced into the store before loading (INTAKE_TEMPLATES_DIR).
	Dirs []string
	// Recheck defaults to DefaultRecheck; negative disables
	// watching (a CLI that loads once).
	Recheck time.Duration
	// Reloaded is called after every reload (tests wait on it).
	Reloaded func()
	// NamesOnly keeps each current version's name, scope and party ids
	// without compiling it: enough for Resolve, which is all the ingest API
	// asks, so an ingest replica holds no client's compiled patterns.
	// Current, Pinned and PinAttempt then serve no compiled template.
	NamesOnly bool
}

// Open syncs opts.Dirs into the store (SyncDir), loads the
// catalogue and keeps it live until Close. A bad template in a directory is
// logged (file, line and key path) and left out; the others are served.
func Open(ctx context.Context, st *store.Store, logger *zap.Logger, opts Options) (*Catalogue, error) {
	for _, dir := range opts.Dirs {
		if dir == "" {
			continue
		}
		_, skipped, err := SyncDir(ctx, st, dir)
		if err != nil {
			return nil, err
		}
		for _, s := range skipped {
			logger.Error("template file left out of the sync", zap.String("dir", dir), zap.Error(s))
		}
	}
	t := &Catalogue{st: st, log: logger, versions: map[versionKey]*Version{}, kick: make(chan struct{}, 1),
		done: make(chan struct{}), reloaded: opts.Reloaded, namesOnly: opts.NamesOnly}
	if err := t.Reload(ctx); err != nil {
		return nil, err
	}
	if opts.Recheck < 0 {
		close(t.done)
		t.stop = func() {}
		return t, nil
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	t.stop = stop
	go t.watch(wctx, cmpDuration(opts.Recheck, DefaultRecheck))
	return t, nil
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Close stops watching for changes.
func (t *Catalogue) Close() {
	t.stop()
	<-t.done
}

// watch reloads on every notification and every recheck until ctx is done.
// The listener reloads once each time its LISTEN is in place, so changes
// made while it was reconnecting are not lost.
func (t *Catalogue) watch(ctx context.Context, recheck time.Duration) {
	defer close(t.done)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for ctx.Err() == nil {
			err := t.st.ListenTemplates(ctx, t.Kick, t.Kick)
			if ctx.Err() != nil {
				return
			}
			t.log.Warn("template notifications interrupted; listening again", zap.Error(err))
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	})
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.kick:
		case <-tick.C:
		}
		if err := t.Reload(ctx); err != nil && ctx.Err() == nil {
			t.log.Warn("reload templates", zap.Error(err))
		}
	}
}

// Kick asks the watcher for a reload (coalesced).
func (t *Catalogue) Kick() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Reload reads the current versions from the store and swaps the catalogue.
// A stored version that no longer compiles is logged and left out (its
// template is not served) rather than failing the whole catalogue.
func (t *Catalogue) Reload(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	infos, err := t.st.CatalogueTemplates(ctx)
	if err != nil {
		return fmt.Errorf("load templates: %w", err)
	}
	s := &snapshot{global: map[string]*Version{}, globalParty: map[string]*Version{},
		client: map[string]map[string]*Version{}, clientParty: map[string]map[string]*Version{}}
	old := t.snap.Load()
	// Only current versions stay compiled; an older one that an attempt is
	// pinned to is compiled again on demand (PinAttempt), so the cache does not
	// grow with every push.
	current := map[versionKey]*Version{}
	defer func() {
		if current != nil {
			t.versions = current
		}
	}()
	for _, info := range infos {
		if !info.Enabled {
			continue
		}
		v, err := t.loadLocked(ctx, info)
		if err != nil {
			if ctx.Err() != nil {
				current = nil // keep the cache as it was
				return err
			}
			t.log.Error("template version not served", zap.String("template", info.Name),
				zap.String("client_id", info.ClientID), zap.Int("version", info.Version), zap.Error(err))
			continue
		}
		names, parties := s.global, s.globalParty
		if info.ClientID != "" {
			if s.client[info.ClientID] == nil {
				s.client[info.ClientID], s.clientParty[info.ClientID] = map[string]*Version{}, map[string]*Version{}
			}
			names, parties = s.client[info.ClientID], s.clientParty[info.ClientID]
		}
		current[versionKey{info.ID, info.Version}] = v
		names[info.Name] = v
		for _, id := range info.PartyIDs {
			parties[id] = v
		}
		if old != nil {
			if prev, ok := old.byName(info.ClientID, info.Name); !ok || prev.Number != v.Number || prev.ClientID != v.ClientID {
				t.log.Info("template live", zap.String("template", v.Name), zap.String("client_id", v.ClientID),
					zap.Int("version", v.Number))
			}
		}
	}
	t.snap.Store(s)
	if t.reloaded != nil {
		t.reloaded()
	}
	return nil
}

// loadLocked is the version info names for the snapshot: compiled, or with
// NamesOnly only its names.
func (t *Catalogue) loadLocked(ctx context.Context, info store.TemplateInfo) (*Version, error) {
	if t.namesOnly {
		return &Version{TemplateID: info.ID, Name: info.Name, ClientID: info.ClientID, Number: info.Version,
			SHA256: info.SHA256}, nil
	}
	return t.versionLocked(ctx, info.ID, info.Version)
}

// versionLocked returns the compiled version, from the cache or the store.
func (t *Catalogue) versionLocked(ctx context.Context, id int64, n int) (*Version, error) {
	if v, ok := t.versions[versionKey{id, n}]; ok {
		return v, nil
	}
	sv, err := t.st.TemplateSource(ctx, id, n)
	if err != nil {
		return nil, err
	}
	tpl, err := CompileVersion(sv.Name, sv.Filename, sv.Content)
	if err != nil {
		return nil, err
	}
	set, err := template.NewSet(tpl)
	if err != nil {
		return nil, err
	}
	v := &Version{TemplateID: id, Name: sv.Name, ClientID: sv.ClientID, Number: n, SHA256: sv.SHA256, Template: tpl, Set: set}
	t.versions[versionKey{id, n}] = v
	return v, nil
}

// Pinned returns the compiled version the document's current attempt was
// processed with (ENOTFOUND when it never started): what a later stage asks
// when the outcome's template options matter, so a push after processing
// does not change how the outcome is reported.
func (t *Catalogue) Pinned(ctx context.Context, documentID string) (*Version, error) {
	pin, err := t.st.CurrentPin(ctx, documentID)
	if err != nil {
		return nil, err
	}
	if pin.TemplateID == 0 {
		return GenericVersion, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.versionLocked(ctx, pin.TemplateID, pin.Version)
}

// CompileVersion parses stored template content. The file name given to
// the parser is the template's name with the pushed file's extension, so a
// template without docintake.name keeps the name it was pushed under.
func CompileVersion(name, filename string, content []byte) (*template.Template, error) {
	tpl, err := template.Parse(name+path.Ext(filename), content)
	if err != nil {
		return nil, err
	}
	if tpl.Name != name {
		return nil, fmt.Errorf("template %s: content names itself %q", name, tpl.Name)
	}
	return tpl, nil
}

// Resolve implements ingest.Templates: an explicit name wins, else the
// template that claims partyID; only templates clientID may use (its own and
// the global ones, enabled). ok is false otherwise, exactly as for a name
// that does not exist.
func (t *Catalogue) Resolve(clientID, name, partyID string) (string, bool) {
	if name == generic.Name {
		return generic.Name, true
	}
	s := t.snap.Load()
	var v *Version
	var ok bool
	if name != "" {
		v, ok = s.byName(clientID, name)
	} else if partyID != "" {
		v, ok = s.byParty(clientID, partyID)
	}
	if !ok {
		return "", false
	}
	return v.Name, true
}

// Current returns the version clientID is served for name now
// (GenericVersion for generic.Name).
func (t *Catalogue) Current(clientID, name string) (*Version, bool) {
	if name == generic.Name {
		return GenericVersion, true
	}
	if t.namesOnly {
		return nil, false // nothing compiled to serve
	}
	return t.snap.Load().byName(clientID, name)
}

// ErrTemplateUnavailable marks a document whose template is not served
// (unknown, deleted or disabled since the upload).
var ErrTemplateUnavailable = errors.New("template not available")

// PinAttempt returns the template version attempt n of doc uses (the
// caller has read n already, store.ProcessingDocument): the one pinned by an
// earlier delivery of the attempt, else the version current now, pinned for
// the rest of the attempt (an event records name, version and SHA-256).
// Every call counts one start of the attempt. Concurrent processors of one
// document agree on one version. A template that is not served gives an
// error wrapping ErrTemplateUnavailable; store errors are returned as they
// are. In the usual case it is one statement and takes no lock. The
// built-in generic reader is pinned as template generic.Name without a
// version (TemplateID 0) and returned as GenericVersion.
func (t *Catalogue) PinAttempt(ctx context.Context, doc document.Document, n int, actor string) (*Version, store.AttemptTemplate, error) {
	var pin store.AttemptTemplate
	var err error
	cur, ok := t.Current(doc.ClientID, doc.Template)
	if ok && cur.Builtin() {
		// Recorded like a stored version (the pin counts the attempt's
		// starts), without a templates row: nothing to compile or cache.
		pin, _, err = t.st.PinAttempt(ctx, doc.ID, store.AttemptTemplate{Attempt: n, Name: cur.Name}, doc.State, actor)
		if err != nil {
			return nil, store.AttemptTemplate{}, err
		}
		if pin.TemplateID == 0 {
			return cur, pin, nil
		}
		// Pinned to a stored template of that name before the built-in
		// reader took it over: that attempt keeps its version.
	} else if ok {
		pin, _, err = t.st.PinAttempt(ctx, doc.ID, store.AttemptTemplate{Attempt: n, TemplateID: cur.TemplateID,
			Name: cur.Name, ClientID: cur.ClientID, Version: cur.Number, SHA256: cur.SHA256,
			IgnoredFeedback: cur.Template.DocIntake.IgnoredFeedback}, doc.State, actor)
		if err == nil && pin.TemplateID == cur.TemplateID && pin.Version == cur.Number {
			// The usual case: the pin is the served version, already
			// compiled; no lock, so a reload's queries never hold up a
			// document.
			return cur, pin, nil
		}
	} else if pin, err = t.st.Attempt(ctx, doc.ID, n); document.ErrorKind(err) == document.ENOTFOUND {
		// Not served now and not pinned before: nothing to run.
		return nil, store.AttemptTemplate{}, fmt.Errorf("%w: %s is not served to client %s (unknown, deleted or disabled)",
			ErrTemplateUnavailable, doc.Template, doc.ClientID)
	}
	if err != nil {
		return nil, store.AttemptTemplate{}, err
	}
	t.mu.Lock()
	v, err := t.versionLocked(ctx, pin.TemplateID, pin.Version)
	t.mu.Unlock()
	if err != nil {
		if document.ErrorKind(err) == document.EUNAVAILABLE || ctx.Err() != nil {
			return nil, pin, err
		}
		return nil, pin, fmt.Errorf("%w: %s: %w", ErrTemplateUnavailable, pin, err)
	}
	return v, pin, nil
}

// SyncDir validates every template under dir strictly and stores
// each whose content or samples differ from the current global version as a
// new version, comment "from INTAKE_TEMPLATES_DIR". It returns the
// templates with a new version and the files it left out, each an error
// naming the file and why (file, line and key path for a template that does
// not load): one bad file must not stop a running system from serving the
// others, and the version stored before keeps serving for the bad one. err
// is for the directory or the store failing. Templates in the store that
// the directory no longer has are left alone.
func SyncDir(ctx context.Context, st *store.Store, dir string) (changed []string, skipped []error, err error) {
	files, err := template.Files(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("templates %s: %w", dir, err)
	}
	var pushes []store.TemplatePush
	var from []string // the file of each push
	for _, f := range files {
		p, _, err := readTemplateFile(f)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%s: not synced: %w", f, err))
			continue
		}
		pushes, from = append(pushes, p), append(from, f)
	}
	pushes, from, conflicts := withoutConflicts(pushes, from)
	skipped = append(skipped, conflicts...)
	for i, p := range pushes {
		p.Comment, p.PushedBy = "from INTAKE_TEMPLATES_DIR", DirActor
		res, err := st.PushTemplate(ctx, p)
		if e, ok := document.AsError(err); ok && e.Code == store.CodeTemplateConflict {
			// A party id another stored template holds: this file's
			// problem, not the store's.
			skipped = append(skipped, fmt.Errorf("%s: not synced: %w", from[i], err))
			continue
		}
		if err != nil {
			return nil, skipped, fmt.Errorf("templates %s: store %s: %w", dir, p.Name, err)
		}
		if res.Changed {
			changed = append(changed, fmt.Sprintf("%s v%d", p.Name, res.Version))
		}
	}
	sort.Strings(changed)
	return changed, skipped, nil
}

// withoutConflicts leaves out every file whose template name or a party id
// another file of the folder claims too, all of them: which one was meant
// is for a person to decide, and until then the stored version serves.
func withoutConflicts(pushes []store.TemplatePush, from []string) ([]store.TemplatePush, []string, []error) {
	claims := map[string][]int{} // "name X" or "party_id X" → indexes
	for i, p := range pushes {
		claims[fmt.Sprintf("name %q", p.Name)] = append(claims[fmt.Sprintf("name %q", p.Name)], i)
		for _, id := range p.PartyIDs {
			k := fmt.Sprintf("party_id %q", id)
			claims[k] = append(claims[k], i)
		}
	}
	why := map[int][]string{}
	for k, idx := range claims {
		for _, i := range idx {
			for _, j := range idx {
				if i != j {
					why[i] = append(why[i], fmt.Sprintf("%s is also claimed by %s", k, from[j]))
				}
			}
		}
	}
	var keep []store.TemplatePush
	var keepFrom []string
	var skipped []error
	for i, p := range pushes {
		if len(why[i]) == 0 {
			keep, keepFrom = append(keep, p), append(keepFrom, from[i])
			continue
		}
		sort.Strings(why[i])
		skipped = append(skipped, fmt.Errorf("%s: not synced: %s", from[i], strings.Join(why[i], "; ")))
	}
	return keep, keepFrom, skipped
}

// ReadTemplateFile reads a template file and its NAME.samples folder into a
// push (global scope; the caller sets scope, comment and pusher). The
// template is validated strictly (NewTemplatePush).
func ReadTemplateFile(file string) (store.TemplatePush, error) {
	p, _, err := readTemplateFile(file)
	return p, err
}

// readTemplateFile is ReadTemplateFile that also returns the parsed template.
func readTemplateFile(file string) (store.TemplatePush, *template.Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return store.TemplatePush{}, nil, fmt.Errorf("template: %w", err)
	}
	smp, err := ReadSamples(SamplesDir(file))
	if err != nil {
		return store.TemplatePush{}, nil, err
	}
	tpl, err := ParseStrict(file, data)
	if err != nil {
		return store.TemplatePush{}, nil, err
	}
	return pushOf(file, data, tpl, smp), tpl, nil
}

// NewTemplatePush validates a template file's content strictly (problems
// are an error with file, line and key path) and returns the push of it
// with its samples (global scope; the caller sets scope, comment and
// pusher).
func NewTemplatePush(file string, content []byte, smp []store.TemplateSample) (store.TemplatePush, error) {
	p, _, err := ParsePush(file, content, smp)
	return p, err
}

// ParsePush is NewTemplatePush that also returns the parsed template, for a
// caller that bounds what it would hold (the client API's template limits)
// without parsing it again.
func ParsePush(file string, content []byte, smp []store.TemplateSample) (store.TemplatePush, *template.Template, error) {
	tpl, err := ParseStrict(file, content)
	if err != nil {
		return store.TemplatePush{}, nil, err
	}
	return pushOf(file, content, tpl, smp), tpl, nil
}

func pushOf(file string, content []byte, tpl *template.Template, smp []store.TemplateSample) store.TemplatePush {
	return store.TemplatePush{Name: tpl.Name, Filename: filepath.Base(file), Content: content,
		PartyIDs: tpl.DocIntake.PartyIDs, Samples: smp}
}

// RunSamples runs the samples of a push against its template (package
// samples): what push does before storing anything.
func RunSamples(ctx context.Context, p store.TemplatePush, text TextFunc) ([]SampleResult, error) {
	tpl, err := CompileVersion(p.Name, p.Filename, p.Content)
	if err != nil {
		return nil, err
	}
	files := make([]SampleFile, len(p.Samples))
	for i, s := range p.Samples {
		files[i] = SampleFile{Name: s.Name, Content: s.Content}
	}
	return CheckSamples(ctx, tpl, files, text)
}

// ParseStrict parses a template and turns its problems into one error.
func ParseStrict(file string, data []byte) (*template.Template, error) {
	tpl, err := template.Parse(file, data)
	if err != nil {
		return nil, err
	}
	if tpl.Name == generic.Name {
		return nil, &template.LoadError{File: file, Path: "docintake.name", Err: ErrReservedName}
	}
	if err := CheckTemplateName(tpl.Name); err != nil {
		return nil, &template.LoadError{File: file, Path: "docintake.name", Err: err}
	}
	if len(tpl.Problems) > 0 {
		errs := make([]error, len(tpl.Problems))
		for i, p := range tpl.Problems {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	return tpl, nil
}

// SamplesDir is the samples folder of a template file: NAME.samples beside
// NAME.yml.
func SamplesDir(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + template.SamplesSuffix
}

// ReadSamples reads the regular files of a samples folder (none when it does
// not exist), sorted by name. Symbolic links are followed, so a folder may
// link documents kept elsewhere.
func ReadSamples(dir string) ([]store.TemplateSample, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("samples: %w", err)
	}
	var out []store.TemplateSample
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("samples: %w", err)
		}
		out = append(out, store.TemplateSample{Name: e.Name(), Content: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SampleText reads sample documents for RunSamples: .txt files as they are,
// PDFs with an engine of Options, started on the first PDF. Set Options to
// PDFOptions(cfg) so samples are read as the processor reads documents;
// the zero value uses pdftext.DefaultOptions. Safe for concurrent use;
// Close stops the engine.
type SampleText struct {
	Options *pdftext.Options
	mu      sync.Mutex
	eng     pdftext.Engine
}

// Text implements TextFunc.
func (s *SampleText) Text(ctx context.Context, name string, content []byte) (string, error) {
	if strings.EqualFold(filepath.Ext(name), ".txt") {
		return string(content), nil
	}
	s.mu.Lock()
	if s.eng == nil {
		opts := pdftext.DefaultOptions()
		if s.Options != nil {
			opts = *s.Options
		}
		e, err := pdftext.New(opts)
		if err != nil {
			s.mu.Unlock()
			return "", err
		}
		s.eng = e
	}
	eng := s.eng
	s.mu.Unlock()
	t, err := eng.Extract(ctx, content)
	if err != nil {
		return "", err
	}
	return t.String(), nil
}

// Close stops the engine, if one was started.
func (s *SampleText) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil {
		return nil
	}
	err := s.eng.Close()
	s.eng = nil
	return err
}
