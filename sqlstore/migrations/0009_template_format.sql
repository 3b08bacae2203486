-- 0009: every version has a template format, plain or dotprompt. The
-- versions stored before this migration are plain.

ALTER TABLE versions ADD COLUMN template_format text NOT NULL DEFAULT 'plain'
    CHECK (template_format IN ('plain', 'dotprompt'));
