import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/openapi/document';

/*
 * Every JSON response an integration test receives is checked against the OpenAPI document: its
 * status must be documented for the operation, and its body must match the documented schema.
 */

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }> }>>;
  components: { responses: Record<string, { content: Record<string, { schema: object }> }> };
};

const doc = buildOpenApiDocument() as unknown as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
  params: (template.match(/\{/g) ?? []).length,
}));
const validators = new Map<string, ValidateFunction>();

function operationOf(method: string, path: string) {
  const matches = templates.filter((t) => t.pattern.test(path) && doc.paths[t.template]?.[method]);
  // The most literal template wins (`/api/job-roles` over a hypothetical `/api/{x}`).
  return matches.sort((a, b) => a.params - b.params)[0];
}

export function checkResponseAgainstDocument(method: string, url: string, status: number, contentType: string | undefined, body: unknown): void {
  const path = new URL(url, 'http://x').pathname;
  const match = operationOf(method.toLowerCase(), path);
  if (!match || !contentType?.includes('application/json')) return;
  const key = `${method} ${match.template} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const documented = doc.paths[match.template]?.[method.toLowerCase()]?.responses[String(status)];
    if (!documented) throw new Error(`${method} ${match.template} answered ${status}, which the OpenAPI document does not list`);
    const response = documented.$ref ? doc.components.responses[documented.$ref.split('/').pop() as string] : documented;
    const schema = response?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${match.template} ${status} has no JSON schema in the document`);
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(`${method} ${path} ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`);
  }
}
