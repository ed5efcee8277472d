insert into task_labor (team_id, project_id, parts_version, task_id, logged_hours, estimated_labor_cost, actual_labor_cost, total_estimated_cost, total_actual_cost, variance, members_json, grouped_members_json, assignees_json)
     select :teamId, :projectId,
            (select coalesce(max(f.parts_version), 0) from project_figures f where f.team_id = :teamId and f.project_id = :projectId),
            r.task_id, r.logged_hours, r.estimated_labor_cost, r.actual_labor_cost, r.total_estimated_cost, r.total_actual_cost, r.variance, r.members_json, r.grouped_members_json, r.assignees_json
     from json_to_recordset(cast(:rows as json)) as r (task_id uuid, logged_hours numeric, estimated_labor_cost numeric, actual_labor_cost numeric, total_estimated_cost numeric, total_actual_cost numeric, variance numeric, members_json text, grouped_members_json text, assignees_json text)
     on conflict (team_id, task_id) do update set parts_version = excluded.parts_version,
       logged_hours = excluded.logged_hours, estimated_labor_cost = excluded.estimated_labor_cost, actual_labor_cost = excluded.actual_labor_cost, total_estimated_cost = excluded.total_estimated_cost, total_actual_cost = excluded.total_actual_cost, variance = excluded.variance, members_json = excluded.members_json, grouped_members_json = excluded.grouped_members_json, assignees_json = excluded.assignees_json
