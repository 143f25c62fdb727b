-- +goose Up
-- Issue 28: a client's price lists, one per buyer ('' is the list for every
-- buyer), checked against each order line; an import replaces one list as a
-- whole (pricelist.Parse validated every row before).
CREATE TABLE price_lists (
    client_id   text NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    -- The buyer (party id, as the duplicate check names it); '' applies to
    -- every buyer without a list of its own for the article.
    buyer       text NOT NULL,
    entries     integer NOT NULL CHECK (entries > 0),
    -- SHA-256 of the imported CSV, so that a list can be recognised.
    sha256      bytea NOT NULL CHECK (length(sha256) = 32),
    imported_by text NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, buyer)
);

CREATE TABLE price_list_entries (
    client_id     text NOT NULL,
    buyer         text NOT NULL,
    -- The entry's line in the imported CSV (the header is line 1), which
    -- flags name.
    line          integer NOT NULL CHECK (line > 1),
    -- The article number as imported and as looked up (upper case, white
    -- space collapsed: pricelist.ArticleKey).
    article       text NOT NULL,
    article_key   text NOT NULL,
    currency      text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    unit_price    numeric NOT NULL CHECK (unit_price >= 0),
    price_basis   numeric NOT NULL CHECK (price_basis > 0),
    -- The unit as imported ('' = any unit) and its UN/ECE code.
    unit          text NOT NULL,
    unit_code     text NOT NULL,
    valid_from    date,
    valid_to      date,
    tolerance_pct numeric NOT NULL CHECK (tolerance_pct >= 0),
    PRIMARY KEY (client_id, buyer, line),
    FOREIGN KEY (client_id, buyer) REFERENCES price_lists (client_id, buyer) ON DELETE CASCADE,
    CHECK (valid_from IS NULL OR valid_to IS NULL OR valid_from <= valid_to)
);
CREATE INDEX price_list_entries_article ON price_list_entries (client_id, article_key);

-- What a client's flagged orders get: delivered with the flags in the
-- openTRANS remarks and the result JSON, or held for review.
ALTER TABLE clients ADD COLUMN flags text NOT NULL DEFAULT 'deliver' CHECK (flags IN ('deliver', 'review'));

-- The flags of a document's attempt (price outside the list's tolerance,
-- delivery date before the order date or already past): what the ops
-- console, the API's document details and intakectl show. Readers take the
-- document's current attempt.
CREATE TABLE document_flags (
    document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    seq         integer NOT NULL CHECK (seq > 0),
    kind        text NOT NULL,
    -- The order line (1-based place in the order; NULL: the header) and
    -- its printed position and article.
    line        integer,
    position    text NOT NULL,
    article     text NOT NULL,
    expected    text NOT NULL,
    printed     text NOT NULL,
    message     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, attempt, seq)
);

-- +goose Down
DROP TABLE document_flags;
ALTER TABLE clients DROP COLUMN flags;
DROP TABLE price_list_entries;
DROP TABLE price_lists;
