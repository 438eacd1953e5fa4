-- Hybrid projects may fall back from the organization's own provider keys to the operator's
-- (billed to credits) when the project allows it; off by default.
ALTER TABLE `projects` ADD `operator_key_fallback` integer DEFAULT false NOT NULL;
