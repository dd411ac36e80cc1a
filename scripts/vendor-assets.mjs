// Copy the built front-end files out of node_modules into the app's static folder (and
// axe-core into the browser tests' folder). Run after `npm ci`; the copies are committed.
import { copyFileSync, mkdirSync } from "node:fs";

const copies = [
  ["node_modules/@picocss/pico/css/pico.min.css", "app/web/static/vendor/pico.min.css"],
  // Swagger UI for /docs (its init script is ours: app/web/static/api-docs.js)
  ["node_modules/swagger-ui-dist/swagger-ui-bundle.js", "app/web/static/vendor/swagger-ui-bundle.js"],
  [
    "node_modules/swagger-ui-dist/swagger-ui-bundle.js.LICENSE.txt",
    "app/web/static/vendor/swagger-ui-bundle.js.LICENSE.txt",
  ],
  ["node_modules/swagger-ui-dist/swagger-ui.css", "app/web/static/vendor/swagger-ui.css"],
  ["node_modules/axe-core/axe.min.js", "tests/browser/vendor/axe.min.js"],
];
for (const [from, to] of copies) {
  mkdirSync(to.slice(0, to.lastIndexOf("/")), { recursive: true });
  copyFileSync(from, to);
  console.log(`${from} -> ${to}`);
}
