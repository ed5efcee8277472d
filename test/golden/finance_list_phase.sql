select case when grouping(group_name) = 0 then group_name end as group_name,
            case when grouping(group_name) = 1 then string_agg(row_json, ',' order by created_at, id) end as rows_json,
            case when grouping(group_name) = 0 then string_agg('"' || id || '"', ',' order by created_at, id) end as ids_json,
            trim_scale(coalesce(sum(estimated_hours), 0)) as estimated_hours, trim_scale(coalesce(sum(logged_hours), 0)) as logged_hours, trim_scale(coalesce(sum(estimated_labor_cost), 0)) as estimated_labor_cost, trim_scale(coalesce(sum(actual_labor_cost), 0)) as actual_labor_cost, trim_scale(coalesce(sum(fixed_cost), 0)) as fixed_cost, trim_scale(coalesce(sum(total_estimated_cost), 0)) as total_estimated_cost, trim_scale(coalesce(sum(total_actual_cost), 0)) as total_actual_cost, trim_scale(coalesce(sum(variance), 0)) as variance, trim_scale(coalesce(sum(estimated_revenue), 0)) as estimated_revenue, trim_scale(coalesce(sum(actual_revenue), 0)) as actual_revenue, trim_scale(coalesce(sum(estimated_margin), 0)) as estimated_margin, trim_scale(coalesce(sum(actual_margin), 0)) as actual_margin, trim_scale(coalesce(sum(has_missing_rates), 0)) as has_missing_rates, exists (
       select 1 from projects cp where cp.team_id = :teamId and cp.id = :projectId and (exists (
       select 1 from project_figures cf
       where cf.team_id = cp.team_id and cf.project_id = cp.id and cf.revision = cp.revision
         and cf.day = (cast(:now as timestamptz) at time zone cp.time_zone)::date and cf.calculator_version = cast(:calculatorVersion as integer))
     and not exists (
       select 1 from stale_tasks sm where sm.team_id = cp.team_id and sm.project_id = cp.id)
     and not exists (select 1 from stale_inputs si where si.team_id = cp.team_id and si.project_id = cp.id))) as current
     from (select t.created_at, t.id, coalesce(t.phase, 'None') as group_name, f.*, case when :filter = 'all' and l.list_row_json is not null then l.list_row_json
       else '{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || to_json(cast(:currency as text))::text
       || ',"estimated_hours":' || trim_scale(f.estimated_hours)
       || ',"logged_hours":' || trim_scale(f.logged_hours)
       || ',"estimated_labor_cost":' || trim_scale(f.estimated_labor_cost)
       || ',"actual_labor_cost":' || trim_scale(f.actual_labor_cost)
       || ',"fixed_cost":' || trim_scale(f.fixed_cost)
       || ',"total_estimated_cost":' || trim_scale(f.total_estimated_cost)
       || ',"total_actual_cost":' || trim_scale(f.total_actual_cost)
       || ',"estimated_revenue":' || trim_scale(f.estimated_revenue)
       || ',"actual_revenue":' || trim_scale(f.actual_revenue)
       || ',"estimated_margin":' || trim_scale(f.estimated_margin)
       || ',"actual_margin":' || trim_scale(f.actual_margin)
       || ',"has_missing_rates":' || case when f.has_missing_rates > 0 then 'true' else 'false' end
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || f.sub_tasks
       || ',"variance":' || trim_scale(f.variance)
       || ',"status":' || coalesce(to_json(t.status)::text, 'null') || ',"priority":' || coalesce(to_json(t.priority)::text, 'null') || ',"phase":' || coalesce(to_json(t.phase)::text, 'null')
       || ',"assignees":' || coalesce(l.assignees_json, '[]') || '}' end as row_json
           from tasks t
     join task_labor l on l.team_id = t.team_id and l.project_id = t.project_id and l.task_id = t.id
     cross join lateral (
       select case :filter when 'billable' then l.tree_billable_tasks when 'non-billable' then l.tree_non_billable_tasks
              else l.tree_billable_tasks + l.tree_non_billable_tasks end as tasks,
              case :filter when 'billable' then l.tree_billable_estimated_hours when 'non-billable' then l.tree_non_billable_estimated_hours
              else l.tree_billable_estimated_hours + l.tree_non_billable_estimated_hours end as estimated_hours,
              case :filter when 'billable' then l.tree_billable_logged_hours when 'non-billable' then l.tree_non_billable_logged_hours
              else l.tree_billable_logged_hours + l.tree_non_billable_logged_hours end as logged_hours,
              case :filter when 'billable' then l.tree_billable_estimated_labor_cost when 'non-billable' then l.tree_non_billable_estimated_labor_cost
              else l.tree_billable_estimated_labor_cost + l.tree_non_billable_estimated_labor_cost end as estimated_labor_cost,
              case :filter when 'billable' then l.tree_billable_actual_labor_cost when 'non-billable' then l.tree_non_billable_actual_labor_cost
              else l.tree_billable_actual_labor_cost + l.tree_non_billable_actual_labor_cost end as actual_labor_cost,
              case :filter when 'billable' then l.tree_billable_fixed_cost when 'non-billable' then l.tree_non_billable_fixed_cost
              else l.tree_billable_fixed_cost + l.tree_non_billable_fixed_cost end as fixed_cost,
              case :filter when 'billable' then l.tree_billable_total_estimated_cost when 'non-billable' then l.tree_non_billable_total_estimated_cost
              else l.tree_billable_total_estimated_cost + l.tree_non_billable_total_estimated_cost end as total_estimated_cost,
              case :filter when 'billable' then l.tree_billable_total_actual_cost when 'non-billable' then l.tree_non_billable_total_actual_cost
              else l.tree_billable_total_actual_cost + l.tree_non_billable_total_actual_cost end as total_actual_cost,
              case :filter when 'billable' then l.tree_billable_variance when 'non-billable' then l.tree_non_billable_variance
              else l.tree_billable_variance + l.tree_non_billable_variance end as variance,
              case :filter when 'billable' then l.tree_billable_estimated_revenue when 'non-billable' then l.tree_non_billable_estimated_revenue
              else l.tree_billable_estimated_revenue + l.tree_non_billable_estimated_revenue end as estimated_revenue,
              case :filter when 'billable' then l.tree_billable_actual_revenue when 'non-billable' then l.tree_non_billable_actual_revenue
              else l.tree_billable_actual_revenue + l.tree_non_billable_actual_revenue end as actual_revenue,
              case :filter when 'billable' then l.tree_billable_estimated_margin when 'non-billable' then l.tree_non_billable_estimated_margin
              else l.tree_billable_estimated_margin + l.tree_non_billable_estimated_margin end as estimated_margin,
              case :filter when 'billable' then l.tree_billable_actual_margin when 'non-billable' then l.tree_non_billable_actual_margin
              else l.tree_billable_actual_margin + l.tree_non_billable_actual_margin end as actual_margin,
              case :filter when 'billable' then l.tree_billable_has_missing_rates when 'non-billable' then l.tree_non_billable_has_missing_rates
              else l.tree_billable_has_missing_rates + l.tree_non_billable_has_missing_rates end as has_missing_rates,
              case :filter when 'billable' then l.children_billable when 'non-billable' then l.children_non_billable
                else l.children end as sub_tasks
     ) f
     where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
       and (cast(:allLevels as boolean) or t.parent_task_id is not distinct from cast(:parentId as uuid))
       and f.tasks > 0) listed
     group by grouping sets ((), (group_name))
