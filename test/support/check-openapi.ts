import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument } from '../../src/openapi/document';

/** `npm run openapi:check`: validates the generated document against the OpenAPI 3.1 schema. */
async function main(): Promise<number> {
  const document = buildOpenApiDocument();
  const result = await new Validator().validate(document);
  if (!result.valid) {
    console.error('The OpenAPI document is invalid:', JSON.stringify(result.errors, null, 2));
    return 1;
  }
  const operations = Object.values(document.paths as Record<string, object>).reduce((n, ops) => n + Object.keys(ops).length, 0);
  console.log(`OpenAPI ${String(document.openapi)} document is valid: ${operations} operations`);
  return 0;
}

main().then((code) => process.exit(code));
