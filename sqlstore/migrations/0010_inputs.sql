-- 0010: every version keeps its typed inputs (prompts.Signature.Inputs),
-- computed once when it is stored: for a dotprompt version with an input
-- schema, one entry a property, "NAME<tab>TYPE<tab>required" or
-- "...<tab>optional", sorted; none for any other version. The promotion
-- guard compares them, as it compares the variables. The versions stored
-- before this migration get none: a dotprompt version stored then keeps
-- the variables it had and types none of them.

ALTER TABLE versions ADD COLUMN inputs text[] COLLATE "C" NOT NULL DEFAULT '{}';
