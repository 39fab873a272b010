-- A portal session's one-time message (issue 54 item 5): what a form that
-- created something has to show once, such as a new app's secret key,
-- kept for the page the form redirects to (post/redirect/get) and cleared
-- when that page first shows it. It is sealed with a key derived from the
-- session's cookie, which only the browser holds: the row alone does not
-- reveal it. Empty when there is none.
ALTER TABLE portal_sessions ADD COLUMN flash TEXT NOT NULL DEFAULT '';
