// Rebuilds dist/playground after `vite build` has emptied dist: the offline
// GraphiQL served at /playground/ (GraphiQL's UMD bundle and the React 18 UMD
// builds it needs, from node_modules, plus our page and start-up script from
// playground-src/). No CDN is reachable from where coupond runs.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(web, 'dist', 'playground');
mkdirSync(out, { recursive: true });

const files = [
  ['node_modules/graphiql/graphiql.min.js', 'graphiql.min.js'],
  ['node_modules/graphiql/graphiql.min.css', 'graphiql.min.css'],
  ['node_modules/react18/umd/react.production.min.js', 'react.production.min.js'],
  ['node_modules/react-dom18/umd/react-dom.production.min.js', 'react-dom.production.min.js'],
  ['playground-src/index.html', 'index.html'],
  ['playground-src/init.js', 'init.js'],
];
for (const [from, to] of files) {
  copyFileSync(join(web, from), join(out, to));
}
console.log(`playground: ${files.length} files copied to dist/playground`);
