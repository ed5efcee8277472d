import type { DemoIds } from '../seeds/demo';

/**
 * What `npm start` prints once it is ready: the URL, the admin token when one was just generated
 * (the only time it is ever shown), and curl commands to paste.
 */
export function printWelcome(opts: {
  baseUrl: string;
  generatedAdminToken: string | undefined;
  adminTokenFromEnv: boolean;
  demo: DemoIds | undefined;
}): void {
  const lines: string[] = ['', `Project finance service listening on ${opts.baseUrl}`, '', `Finance screen: ${opts.baseUrl}/ (sign in by pasting a token)`, ''];
  if (opts.generatedAdminToken) {
    lines.push('A new admin token was generated. It is shown this once; keep it:', '', `  export TOKEN=${opts.generatedAdminToken}`, '');
  } else if (opts.adminTokenFromEnv) {
    lines.push('ADMIN_TOKEN is an admin token of the default team:', '', '  export TOKEN="$ADMIN_TOKEN"', '');
  } else {
    lines.push('Use the admin token printed when this data directory was created (or set ADMIN_TOKEN):', '', '  export TOKEN=<your admin token>', '');
  }
  const h = '-H "Authorization: Bearer $TOKEN"';
  lines.push('Try it:', '', `  curl -s ${opts.baseUrl}/healthz`);
  if (opts.demo) {
    const { projectId, parentTaskId, leafTaskId } = opts.demo;
    lines.push(
      `  curl -s ${h} ${opts.baseUrl}/api/project-finance/task/${leafTaskId}/breakdown`,
      `  curl -s ${h} "${opts.baseUrl}/api/project-finance/task/${parentTaskId}/breakdown?include_subtasks=true"`,
      `  curl -s ${h} ${opts.baseUrl}/api/project-finance/project/${projectId}/tasks`,
      `  curl -s ${h} "${opts.baseUrl}/api/project-finance/project/${projectId}/tasks?parent_task_id=${parentTaskId}&group_by=status"`,
      `  curl -s -X PUT ${h} -H "Content-Type: application/json" -d '{"fixed_cost": 250.50}' ${opts.baseUrl}/api/project-finance/task/${leafTaskId}/fixed-cost`,
      `  curl -s ${h} ${opts.baseUrl}/api/project-finance/task/${leafTaskId}/fixed-cost/history`,
    );
  } else {
    lines.push(`  curl -s ${h} ${opts.baseUrl}/api/projects`);
  }
  lines.push('');
  process.stdout.write(lines.join('\n') + '\n');
}
