// Package catalogue is the template catalogue: every client's and every
// global template version as stored in PostgreSQL, compiled and kept live
// (LISTEN/NOTIFY plus a periodic re-check), the version each document's
// attempt is pinned to, the templates directory synced into the store, and
// the regression samples a version must pass before it is pushed.
//
// The services ask it for a template by client and name or party id
// (Resolve, Current), pin a version to an attempt (PinAttempt, Pinned), and
// validate what a client pushes (NewTemplatePush, RunSamples,
// CheckTemplateName). It depends on the store and the template engine, never
// on a service or on process wiring.
package catalogue
