with recursive
     target (id) as (
       select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null
     ),
     walk (root, branch, id) as (
       select id, null::uuid, id from target
       union all
       select w.root, coalesce(w.branch, c.id), c.id
       from walk w
       cross join lateral (
         select c.id from tasks c where c.team_id = :teamId and c.parent_task_id = w.id and c.archived_at is null offset 0
       ) c
     ),
     rolled as (
       select w.root, count(distinct w.branch) as children,
            count(*) filter (where t.billable) as tree_billable_tasks,
            count(distinct w.branch) filter (where t.billable) as children_billable,
            coalesce(sum(t.estimated_hours) filter (where t.billable), 0) as tree_billable_estimated_hours,
            coalesce(sum(t.logged_hours) filter (where t.billable), 0) as tree_billable_logged_hours,
            coalesce(sum(t.estimated_labor_cost) filter (where t.billable), 0) as tree_billable_estimated_labor_cost,
            coalesce(sum(t.actual_labor_cost) filter (where t.billable), 0) as tree_billable_actual_labor_cost,
            coalesce(sum(t.fixed_cost) filter (where t.billable), 0) as tree_billable_fixed_cost,
            coalesce(sum(t.total_estimated_cost) filter (where t.billable), 0) as tree_billable_total_estimated_cost,
            coalesce(sum(t.total_actual_cost) filter (where t.billable), 0) as tree_billable_total_actual_cost,
            coalesce(sum(t.variance) filter (where t.billable), 0) as tree_billable_variance,
            coalesce(sum(t.estimated_revenue) filter (where t.billable), 0) as tree_billable_estimated_revenue,
            coalesce(sum(t.actual_revenue) filter (where t.billable), 0) as tree_billable_actual_revenue,
            coalesce(sum(t.estimated_margin) filter (where t.billable), 0) as tree_billable_estimated_margin,
            coalesce(sum(t.actual_margin) filter (where t.billable), 0) as tree_billable_actual_margin,
            coalesce(sum(t.has_missing_rates) filter (where t.billable), 0) as tree_billable_has_missing_rates,
            count(*) filter (where not t.billable) as tree_non_billable_tasks,
            count(distinct w.branch) filter (where not t.billable) as children_non_billable,
            coalesce(sum(t.estimated_hours) filter (where not t.billable), 0) as tree_non_billable_estimated_hours,
            coalesce(sum(t.logged_hours) filter (where not t.billable), 0) as tree_non_billable_logged_hours,
            coalesce(sum(t.estimated_labor_cost) filter (where not t.billable), 0) as tree_non_billable_estimated_labor_cost,
            coalesce(sum(t.actual_labor_cost) filter (where not t.billable), 0) as tree_non_billable_actual_labor_cost,
            coalesce(sum(t.fixed_cost) filter (where not t.billable), 0) as tree_non_billable_fixed_cost,
            coalesce(sum(t.total_estimated_cost) filter (where not t.billable), 0) as tree_non_billable_total_estimated_cost,
            coalesce(sum(t.total_actual_cost) filter (where not t.billable), 0) as tree_non_billable_total_actual_cost,
            coalesce(sum(t.variance) filter (where not t.billable), 0) as tree_non_billable_variance,
            coalesce(sum(t.estimated_revenue) filter (where not t.billable), 0) as tree_non_billable_estimated_revenue,
            coalesce(sum(t.actual_revenue) filter (where not t.billable), 0) as tree_non_billable_actual_revenue,
            coalesce(sum(t.estimated_margin) filter (where not t.billable), 0) as tree_non_billable_estimated_margin,
            coalesce(sum(t.actual_margin) filter (where not t.billable), 0) as tree_non_billable_actual_margin,
            coalesce(sum(t.has_missing_rates) filter (where not t.billable), 0) as tree_non_billable_has_missing_rates
       from walk w
       cross join lateral (
         select t.billable, t.estimated_hours as estimated_hours, l.logged_hours as logged_hours, l.estimated_labor_cost as estimated_labor_cost, l.actual_labor_cost as actual_labor_cost, t.fixed_cost as fixed_cost, l.total_estimated_cost as total_estimated_cost, l.total_actual_cost as total_actual_cost, l.variance as variance, l.estimated_revenue as estimated_revenue, l.actual_revenue as actual_revenue, l.estimated_margin as estimated_margin, l.actual_margin as actual_margin, l.has_missing_rates as has_missing_rates
         from tasks t left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
         where t.team_id = :teamId and t.id = w.id offset 0
       ) t
       group by w.root
     )
     update task_labor l
     set children = r.children, tree_billable_tasks = r.tree_billable_tasks, children_billable = r.children_billable, tree_billable_estimated_hours = r.tree_billable_estimated_hours, tree_billable_logged_hours = r.tree_billable_logged_hours, tree_billable_estimated_labor_cost = r.tree_billable_estimated_labor_cost, tree_billable_actual_labor_cost = r.tree_billable_actual_labor_cost, tree_billable_fixed_cost = r.tree_billable_fixed_cost, tree_billable_total_estimated_cost = r.tree_billable_total_estimated_cost, tree_billable_total_actual_cost = r.tree_billable_total_actual_cost, tree_billable_variance = r.tree_billable_variance, tree_billable_estimated_revenue = r.tree_billable_estimated_revenue, tree_billable_actual_revenue = r.tree_billable_actual_revenue, tree_billable_estimated_margin = r.tree_billable_estimated_margin, tree_billable_actual_margin = r.tree_billable_actual_margin, tree_billable_has_missing_rates = r.tree_billable_has_missing_rates, tree_non_billable_tasks = r.tree_non_billable_tasks, children_non_billable = r.children_non_billable, tree_non_billable_estimated_hours = r.tree_non_billable_estimated_hours, tree_non_billable_logged_hours = r.tree_non_billable_logged_hours, tree_non_billable_estimated_labor_cost = r.tree_non_billable_estimated_labor_cost, tree_non_billable_actual_labor_cost = r.tree_non_billable_actual_labor_cost, tree_non_billable_fixed_cost = r.tree_non_billable_fixed_cost, tree_non_billable_total_estimated_cost = r.tree_non_billable_total_estimated_cost, tree_non_billable_total_actual_cost = r.tree_non_billable_total_actual_cost, tree_non_billable_variance = r.tree_non_billable_variance, tree_non_billable_estimated_revenue = r.tree_non_billable_estimated_revenue, tree_non_billable_actual_revenue = r.tree_non_billable_actual_revenue, tree_non_billable_estimated_margin = r.tree_non_billable_estimated_margin, tree_non_billable_actual_margin = r.tree_non_billable_actual_margin, tree_non_billable_has_missing_rates = r.tree_non_billable_has_missing_rates,
         list_row_json = '{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || to_json(p.currency)::text
       || ',"estimated_hours":' || trim_scale((r.tree_billable_estimated_hours + r.tree_non_billable_estimated_hours))
       || ',"logged_hours":' || trim_scale((r.tree_billable_logged_hours + r.tree_non_billable_logged_hours))
       || ',"estimated_labor_cost":' || trim_scale((r.tree_billable_estimated_labor_cost + r.tree_non_billable_estimated_labor_cost))
       || ',"actual_labor_cost":' || trim_scale((r.tree_billable_actual_labor_cost + r.tree_non_billable_actual_labor_cost))
       || ',"fixed_cost":' || trim_scale((r.tree_billable_fixed_cost + r.tree_non_billable_fixed_cost))
       || ',"total_estimated_cost":' || trim_scale((r.tree_billable_total_estimated_cost + r.tree_non_billable_total_estimated_cost))
       || ',"total_actual_cost":' || trim_scale((r.tree_billable_total_actual_cost + r.tree_non_billable_total_actual_cost))
       || ',"estimated_revenue":' || trim_scale((r.tree_billable_estimated_revenue + r.tree_non_billable_estimated_revenue))
       || ',"actual_revenue":' || trim_scale((r.tree_billable_actual_revenue + r.tree_non_billable_actual_revenue))
       || ',"estimated_margin":' || trim_scale((r.tree_billable_estimated_margin + r.tree_non_billable_estimated_margin))
       || ',"actual_margin":' || trim_scale((r.tree_billable_actual_margin + r.tree_non_billable_actual_margin))
       || ',"has_missing_rates":' || case when (r.tree_billable_has_missing_rates + r.tree_non_billable_has_missing_rates) > 0 then 'true' else 'false' end
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || r.children
       || ',"variance":' || trim_scale((r.tree_billable_variance + r.tree_non_billable_variance))
       || ',"status":' || coalesce(to_json(t.status)::text, 'null') || ',"priority":' || coalesce(to_json(t.priority)::text, 'null') || ',"phase":' || coalesce(to_json(t.phase)::text, 'null')
       || ',"assignees":' || coalesce(l.assignees_json, '[]') || '}'
     from rolled r
     cross join lateral (select * from tasks t where t.team_id = :teamId and t.id = r.root offset 0) t
     cross join lateral (select p.currency from projects p where p.team_id = :teamId and p.id = :projectId offset 0) p
     where l.team_id = :teamId and l.task_id = any(array(select root from rolled)) and l.task_id = r.root
