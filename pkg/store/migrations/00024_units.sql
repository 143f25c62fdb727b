-- +goose Up
-- Issue 28: a client's unit table. One unit of the buyer, as printed on its
-- orders (for one article, or for every article), is factor units of the
-- supplier's unit code (UN/ECE Recommendation 20, BMEcat 2005 list): a case
-- of 12 (CS) is 12 pieces (C62). The processor looks a line's unit up here
-- before the built-in spellings; a unit found in neither defers the
-- document (mapping_not_resolved).
CREATE TABLE unit_conversions (
    client_id   text NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    -- The buyer's unit as imported and as looked up (units.Key: lower case,
    -- no white space, no trailing dot).
    unit        text NOT NULL,
    unit_key    text NOT NULL CHECK (unit_key <> ''),
    -- The article number it is for, as imported and as looked up (upper
    -- case, white space collapsed); '' for every article.
    article     text NOT NULL,
    article_key text NOT NULL,
    code        text NOT NULL CHECK (code ~ '^[0-9A-Z]{2,3}$'),
    factor      numeric NOT NULL CHECK (factor > 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, unit_key, article_key)
);

-- +goose Down
DROP TABLE unit_conversions;
