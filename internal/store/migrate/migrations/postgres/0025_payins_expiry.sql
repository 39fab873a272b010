-- A merchant's payins by expiry: a second's expiry job (payin/expiry.go)
-- finds the payins that expire within its second here, instead of each
-- pending payin waiting with a job of its own.
CREATE INDEX payins_expiry ON payins (merchant_id, expired_at);
