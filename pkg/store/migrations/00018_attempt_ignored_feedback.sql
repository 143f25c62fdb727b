-- +goose Up
-- Whether the pinned template version asks for a webhook on ignored
-- documents (docintake.ignored_feedback), recorded when the attempt is
-- pinned by the processor that compiled the version. The dispatcher reads
-- it here instead of compiling templates, so its binary needs no template
-- engine.
ALTER TABLE document_attempts ADD COLUMN ignored_feedback boolean NOT NULL DEFAULT false;
-- Pins made before this column: the flag as the pinned version's content
-- writes it (a YAML or JSON key set to a YAML 1.1 or JSON true), the only
-- way SQL can read it; a pin this misses reports its ignored document with
-- no webhook, which is the default.
UPDATE document_attempts a SET ignored_feedback = true
    FROM template_versions v
    WHERE v.template_id = a.template_id AND v.version = a.template_version
      AND convert_from(v.content, 'UTF8') ~* '"?ignored_feedback"?[ \t]*:[ \t]*"?(true|yes|on|y)"?[ \t]*(,|#|\}|\r?\n|$)';

-- +goose Down
ALTER TABLE document_attempts DROP COLUMN ignored_feedback;
