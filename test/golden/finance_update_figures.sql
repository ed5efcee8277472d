with recursive
     r as (select * from json_to_recordset(cast(:rows as json)) as r (task_id uuid, logged_hours numeric, estimated_labor_cost numeric, actual_labor_cost numeric, total_estimated_cost numeric, total_actual_cost numeric, variance numeric, assignees_json text)),
     changed as (
       select r.task_id, r.logged_hours - l.logged_hours as logged_hours, r.estimated_labor_cost - l.estimated_labor_cost as estimated_labor_cost, r.actual_labor_cost - l.actual_labor_cost as actual_labor_cost, r.total_estimated_cost - l.total_estimated_cost as total_estimated_cost, r.total_actual_cost - l.total_actual_cost as total_actual_cost, r.variance - l.variance as variance
       from r join task_labor l on l.team_id = :teamId and l.project_id = :projectId and l.task_id = r.task_id
     ),
     climb (id, billable, logged_hours, estimated_labor_cost, actual_labor_cost, total_estimated_cost, total_actual_cost, variance) as (
       select t.id, t.billable, c.logged_hours, c.estimated_labor_cost, c.actual_labor_cost, c.total_estimated_cost, c.total_actual_cost, c.variance
       from changed c join tasks t on t.team_id = :teamId and t.id = c.task_id and t.archived_at is null
       where c.logged_hours <> 0 or c.estimated_labor_cost <> 0 or c.actual_labor_cost <> 0 or c.total_estimated_cost <> 0 or c.total_actual_cost <> 0 or c.variance <> 0
       union all
       select t.parent_task_id, u.billable, u.logged_hours, u.estimated_labor_cost, u.actual_labor_cost, u.total_estimated_cost, u.total_actual_cost, u.variance
       from climb u join tasks t on t.team_id = :teamId and t.id = u.id and t.archived_at is null
       where t.parent_task_id is not null
     ),
     deltas as (
       select id, coalesce(sum(logged_hours) filter (where billable), 0) as billable_logged_hours, coalesce(sum(logged_hours) filter (where not billable), 0) as non_billable_logged_hours, coalesce(sum(estimated_labor_cost) filter (where billable), 0) as billable_estimated_labor_cost, coalesce(sum(estimated_labor_cost) filter (where not billable), 0) as non_billable_estimated_labor_cost, coalesce(sum(actual_labor_cost) filter (where billable), 0) as billable_actual_labor_cost, coalesce(sum(actual_labor_cost) filter (where not billable), 0) as non_billable_actual_labor_cost, coalesce(sum(total_estimated_cost) filter (where billable), 0) as billable_total_estimated_cost, coalesce(sum(total_estimated_cost) filter (where not billable), 0) as non_billable_total_estimated_cost, coalesce(sum(total_actual_cost) filter (where billable), 0) as billable_total_actual_cost, coalesce(sum(total_actual_cost) filter (where not billable), 0) as non_billable_total_actual_cost, coalesce(sum(variance) filter (where billable), 0) as billable_variance, coalesce(sum(variance) filter (where not billable), 0) as non_billable_variance
       from climb group by id
     ),
     changes as (
       select coalesce(r.task_id, d.id) as task_id, r.task_id is not null as own,
              r.logged_hours, r.estimated_labor_cost, r.actual_labor_cost, r.total_estimated_cost, r.total_actual_cost, r.variance, r.assignees_json,
              coalesce(d.billable_logged_hours, 0) as billable_logged_hours, coalesce(d.billable_estimated_labor_cost, 0) as billable_estimated_labor_cost, coalesce(d.billable_actual_labor_cost, 0) as billable_actual_labor_cost, coalesce(d.billable_total_estimated_cost, 0) as billable_total_estimated_cost, coalesce(d.billable_total_actual_cost, 0) as billable_total_actual_cost, coalesce(d.billable_variance, 0) as billable_variance, coalesce(d.non_billable_logged_hours, 0) as non_billable_logged_hours, coalesce(d.non_billable_estimated_labor_cost, 0) as non_billable_estimated_labor_cost, coalesce(d.non_billable_actual_labor_cost, 0) as non_billable_actual_labor_cost, coalesce(d.non_billable_total_estimated_cost, 0) as non_billable_total_estimated_cost, coalesce(d.non_billable_total_actual_cost, 0) as non_billable_total_actual_cost, coalesce(d.non_billable_variance, 0) as non_billable_variance
       from r full join deltas d on d.id = r.task_id
     ),
     updated as (
       update task_labor l
       set parts_version = case when u.own then -1 else l.parts_version end,
           logged_hours = case when u.own then u.logged_hours else l.logged_hours end, estimated_labor_cost = case when u.own then u.estimated_labor_cost else l.estimated_labor_cost end, actual_labor_cost = case when u.own then u.actual_labor_cost else l.actual_labor_cost end, total_estimated_cost = case when u.own then u.total_estimated_cost else l.total_estimated_cost end, total_actual_cost = case when u.own then u.total_actual_cost else l.total_actual_cost end, variance = case when u.own then u.variance else l.variance end, assignees_json = case when u.own then u.assignees_json else l.assignees_json end,
           tree_billable_logged_hours = l.tree_billable_logged_hours + u.billable_logged_hours, tree_billable_estimated_labor_cost = l.tree_billable_estimated_labor_cost + u.billable_estimated_labor_cost, tree_billable_actual_labor_cost = l.tree_billable_actual_labor_cost + u.billable_actual_labor_cost, tree_billable_total_estimated_cost = l.tree_billable_total_estimated_cost + u.billable_total_estimated_cost, tree_billable_total_actual_cost = l.tree_billable_total_actual_cost + u.billable_total_actual_cost, tree_billable_variance = l.tree_billable_variance + u.billable_variance, tree_non_billable_logged_hours = l.tree_non_billable_logged_hours + u.non_billable_logged_hours, tree_non_billable_estimated_labor_cost = l.tree_non_billable_estimated_labor_cost + u.non_billable_estimated_labor_cost, tree_non_billable_actual_labor_cost = l.tree_non_billable_actual_labor_cost + u.non_billable_actual_labor_cost, tree_non_billable_total_estimated_cost = l.tree_non_billable_total_estimated_cost + u.non_billable_total_estimated_cost, tree_non_billable_total_actual_cost = l.tree_non_billable_total_actual_cost + u.non_billable_total_actual_cost, tree_non_billable_variance = l.tree_non_billable_variance + u.non_billable_variance,
           list_row_json = '{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || to_json(p.currency)::text
       || ',"estimated_hours":' || trim_scale((l.tree_billable_estimated_hours + l.tree_non_billable_estimated_hours))
       || ',"logged_hours":' || trim_scale((l.tree_billable_logged_hours + u.billable_logged_hours + l.tree_non_billable_logged_hours + u.non_billable_logged_hours))
       || ',"estimated_labor_cost":' || trim_scale((l.tree_billable_estimated_labor_cost + u.billable_estimated_labor_cost + l.tree_non_billable_estimated_labor_cost + u.non_billable_estimated_labor_cost))
       || ',"actual_labor_cost":' || trim_scale((l.tree_billable_actual_labor_cost + u.billable_actual_labor_cost + l.tree_non_billable_actual_labor_cost + u.non_billable_actual_labor_cost))
       || ',"fixed_cost":' || trim_scale((l.tree_billable_fixed_cost + l.tree_non_billable_fixed_cost))
       || ',"total_estimated_cost":' || trim_scale((l.tree_billable_total_estimated_cost + u.billable_total_estimated_cost + l.tree_non_billable_total_estimated_cost + u.non_billable_total_estimated_cost))
       || ',"total_actual_cost":' || trim_scale((l.tree_billable_total_actual_cost + u.billable_total_actual_cost + l.tree_non_billable_total_actual_cost + u.non_billable_total_actual_cost))
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || l.children
       || ',"variance":' || trim_scale((l.tree_billable_variance + u.billable_variance + l.tree_non_billable_variance + u.non_billable_variance))
       || ',"status":' || coalesce(to_json(t.status)::text, 'null') || ',"priority":' || coalesce(to_json(t.priority)::text, 'null') || ',"phase":' || coalesce(to_json(t.phase)::text, 'null')
       || ',"assignees":' || coalesce(case when u.own then u.assignees_json else l.assignees_json end, '[]') || '}'
       from changes u
       cross join lateral (select * from tasks t where t.team_id = :teamId and t.id = u.task_id offset 0) t
     cross join lateral (select p.currency from projects p where p.team_id = :teamId and p.id = :projectId offset 0) p
       where l.team_id = :teamId and l.project_id = :projectId and l.task_id = u.task_id
       returning u.own
     )
     select count(*) filter (where own) as stored from updated
