package web

// mountVerify mounts the identity verification page (GET /verify/{token}).
func (p *Pages) mountVerify() {}
