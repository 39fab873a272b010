package web

// mountPay mounts the hosted payment page of payins (/pay/{uuid}).
func (p *Pages) mountPay() {}
