// Starts GraphiQL against this server's endpoint. Paste a token into the
// Headers tab as {"Authorization": "Bearer cpd_..."}.
(function () {
  var el = document.getElementById('graphiql');
  var fetcher = GraphiQL.createFetcher({ url: el.dataset.endpoint });
  ReactDOM.createRoot(el).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultHeaders: '{\n  "Authorization": "Bearer "\n}',
      shouldPersistHeaders: true,
    }),
  );
})();
