package httpapi

func (a *API) contactRoutes() []route {
	return nil
}
