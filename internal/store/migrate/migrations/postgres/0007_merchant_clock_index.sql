-- The job queue bounds its scan for due jobs by the largest merchant clock offset.
CREATE INDEX merchants_clock_offset ON merchants (clock_offset_ms);
