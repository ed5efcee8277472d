with recursive scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null)
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     order by t.created_at, t.id
